import { useMemo } from 'react';
import { Route, Routes, useParams } from 'react-router';
import { api, ok } from '../../api/client';
import { Field, Form, Section, Show, useAction, useLoad } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { ContractsTable } from './contract-list';
import { ContractPage } from './contract-page';
import { Check, SuggestField } from './inputs';
import { accountRoutes, type Contract, type ContractRoutes } from './routes';
import { contractState, contractTitle, isUuid, text } from './terms';

/** An organization's contracts (`/orgs/:org/contracts/*`), through the account's routes with the `org` context. */
export function OrgContracts() {
  const org = useParams().org ?? '';
  const routes = useMemo(() => accountRoutes(org), [org]);
  return (
    <>
      <OrgNav org={org} />
      <Routes>
        <Route index element={<ContractList org={org} routes={routes} />} />
        <Route path=":id" element={<OrgContract routes={routes} />} />
      </Routes>
    </>
  );
}

function OrgContract({ routes }: { routes: ContractRoutes }) {
  const id = Number(useParams().id);
  if (!Number.isSafeInteger(id) || id < 1) return <p className="error">No such contract.</p>;
  // Keyed by the contract: what one contract's page learnt (licenses issued, a quota refusal) is not another's.
  return <ContractPage key={id} routes={routes} id={id} />;
}

function ContractList({ org, routes }: { org: string; routes: ContractRoutes }) {
  const contracts = useLoad(() => ok(api.GET('/user/contracts', { params: { query: { org } } })), [org]);
  return (
    <Show loaded={contracts}>
      {(list) => (
        <>
          <Section title="Contracts">
            <ContractsTable caption={`Contracts of ${org}`} contracts={list} base={routes.base} />
          </Section>
          <AssignCluster org={org} contracts={list.filter((c) => contractState(c) === 'Active')} changed={contracts.reload} />
        </>
      )}
    </Show>
  );
}

/**
 * `assign-cluster`: one cluster bound to several of the account's active contracts at once, all or none (a
 * contract it is bound to already stays as it is). The cluster is suggested from the organization's enrolled
 * clusters and those bound already; any UUID is taken (an air-gapped cluster is known by its UUID only).
 */
function AssignCluster({ org, contracts, changed }: { org: string; contracts: Contract[]; changed(): void }) {
  const action = useAction();
  const known = useLoad(async () => {
    const [enrolled, bound] = await Promise.all([
      ok(api.GET('/orgs/{orgname}/clusters', { params: { path: { orgname: org } } })),
      ok(api.GET('/user/contracts/active/associated-clusters', { params: { query: { org } } })),
    ]);
    const names = new Map<string, string>();
    for (const c of enrolled) names.set(c.uid, c.name);
    for (const b of bound) if (!names.has(b.cluster)) names.set(b.cluster, b.displayName || b.cluster);
    return [...names].map(([uid, name]): [string, string] => [uid, name]);
  }, [org]);
  if (contracts.length === 0) return null;
  return (
    <Section title="Bind a cluster to several contracts">
      <Form
        label="Bind a cluster to several contracts"
        submitLabel="Bind to the chosen contracts"
        action={action}
        validate={(data) => {
          const cluster = text(data, 'cluster');
          if (!cluster) return 'Cluster UUID is required';
          if (!isUuid(cluster)) return `Cluster UUID: "${cluster}" is not a UUID`;
          if (data.getAll('contract').length === 0) return 'Choose at least one contract';
        }}
        submit={async (data) => {
          const clusterId = text(data, 'cluster').toLowerCase();
          const displayName = text(data, 'displayName');
          const contractIds = data.getAll('contract').map(Number);
          await ok(
            api.POST('/user/contracts/assign-cluster', {
              params: { query: { org } },
              body: { clusterId, contractIds, ...(displayName ? { displayName } : {}) },
            }),
          );
          changed();
          return `Bound ${displayName || clusterId} to contract${contractIds.length > 1 ? 's' : ''} ${contractIds.join(', ')}`;
        }}
      >
        <SuggestField
          label="Cluster UUID"
          name="cluster"
          required
          suggestions={known.data ?? []}
          hint="One of the organization's clusters, or the UUID of an air-gapped one"
        />
        <Field label="Display name" name="displayName" hint="Optional: its name on the contracts" />
        <fieldset>
          <legend>Contracts</legend>
          {contracts.map((c) => (
            <Check key={c.id} name="contract" value={String(c.id)} label={`Contract ${c.id}: ${contractTitle(c)}`} />
          ))}
        </fieldset>
      </Form>
    </Section>
  );
}
