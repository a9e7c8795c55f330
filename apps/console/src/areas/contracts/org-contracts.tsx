import { useMemo } from 'react';
import { Route, Routes, useParams } from 'react-router';
import { api, ok } from '../../api/client';
import { Field, Form, Section, Show, useAction } from '../../ui';
import { useOrgAllowed } from '../orgs/api';
import { OrgNav } from '../../ui/org-nav';
import { ContractsTable } from './contract-list';
import { ContractPage } from './contract-page';
import { Check, SuggestField } from './inputs';
import { accountRoutes, useContractChange, useKnownClusters, useOrgContracts, type Contract, type ContractRoutes } from './api';
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
        <Route path=":id" element={<OrgContract org={org} routes={routes} />} />
      </Routes>
    </>
  );
}

function OrgContract({ org, routes }: { org: string; routes: ContractRoutes }) {
  const id = Number(useParams().id);
  // Binding, unbinding and naming clusters take `add_cluster:contract_mgmt` on the organization; issuing a license
  // the `issue_license` relation, which the organization's holders have on its clusters and contracts.
  const can = useOrgAllowed(org);
  if (!Number.isSafeInteger(id) || id < 1) return <p className="error">No such contract.</p>;
  // Keyed by the contract: what one contract's page learnt (licenses issued, a quota refusal) is not another's.
  return <ContractPage key={id} routes={routes} id={id} may={{ bind: can('add_cluster_contract'), issue: can('issue_license') }} />;
}

function ContractList({ org, routes }: { org: string; routes: ContractRoutes }) {
  const contracts = useOrgContracts(org);
  const can = useOrgAllowed(org);
  return (
    <Show loaded={contracts}>
      {(list) => (
        <>
          <Section title="Contracts">
            <ContractsTable caption={`Contracts of ${org}`} contracts={list} base={routes.base} />
          </Section>
          {can('add_cluster_contract') && (
            <AssignCluster org={org} routes={routes} contracts={list.filter((c) => contractState(c) === 'Active')} />
          )}
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
function AssignCluster({ org, routes, contracts }: { org: string; routes: ContractRoutes; contracts: Contract[] }) {
  const action = useAction();
  const known = useKnownClusters(org);
  const assignment = useContractChange(routes, (body: { clusterId: string; contractIds: number[]; displayName?: string }) =>
    ok(api.POST('/user/contracts/assign-cluster', { params: { query: { org } }, body })),
  );
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
          await assignment.mutateAsync({ clusterId, contractIds, ...(displayName ? { displayName } : {}) });
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
