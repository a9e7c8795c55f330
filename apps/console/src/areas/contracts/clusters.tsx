import { useState } from 'react';
import { ErrorMessage, Field, Form, Outcome, Section, Select, Table, useAction } from '../../ui';
import { licenseValidity, saveLicense } from './license';
import {
  useContractChange,
  useUnboundClusters,
  type Binding,
  type Contract,
  type ContractRights,
  type ContractRoutes,
  type License,
} from './api';
import { clusterName, contractState, isUuid, text } from './terms';

/**
 * The clusters bound to a contract: per cluster, issue a license and download it, or unbind it (each offered as
 * `may` allows); and binding more.
 */

interface Props {
  routes: ContractRoutes;
  contract: Contract;
  may: ContractRights;
}

export function BoundClusters({ routes, contract, may }: Props) {
  const action = useAction();
  const issuing = useContractChange(routes, (ccID: number) => routes.issueLicense(contract.id, ccID));
  const unbinding = useContractChange(routes, (ccID: number) => routes.unbind(contract.id, ccID));
  // The licenses issued on this screen, by binding (ccID): the API answers a license once, at issue.
  const [issued, setIssued] = useState<Record<number, License>>({});
  const state = contractState(contract);

  const issue = (b: Binding) =>
    action.run(async () => {
      const name = clusterName(b);
      const license = await issuing.mutateAsync(b.id);
      setIssued((prev) => ({ ...prev, [b.id]: license }));
      return `License issued for ${name}, ${licenseValidity(license)}. Use "Download license for ${name}" to save it.`;
    });

  const download = (b: Binding, license: License) => action.run(async () => `Saved ${saveLicense(license, clusterName(b))}`);

  const unbind = (b: Binding) =>
    action.run(async () => {
      await unbinding.mutateAsync(b.id);
      setIssued((prev) => {
        const next = { ...prev };
        delete next[b.id];
        return next;
      });
      return `Unbound ${clusterName(b)}`;
    });

  return (
    <Section title="Bound clusters">
      {state !== 'Active' && <p className="error">This contract is {state.toLowerCase()}: the platform issues no license under it.</p>}
      <Table
        caption={`Clusters bound to contract ${contract.id}`}
        rows={contract.clusters}
        rowKey={(b) => b.id}
        empty="No cluster is bound yet."
        columns={[
          {
            header: 'Cluster',
            cell: (b) => (
              <>
                {clusterName(b)}
                <br />
                <code className="muted">{b.cluster}</code>
              </>
            ),
          },
          {
            // Before the details, so a narrow screen shows them without scrolling the table.
            header: 'Actions',
            cell: (b) => {
              const name = clusterName(b);
              const license = issued[b.id];
              return (
                <>
                  {may.issue && (
                    <>
                      <button type="button" className="primary" disabled={action.busy} onClick={() => void issue(b)}>
                        Issue license for {name}
                      </button>{' '}
                    </>
                  )}
                  {license && (
                    <>
                      <button type="button" disabled={action.busy} onClick={() => void download(b, license)}>
                        Download license for {name}
                      </button>{' '}
                    </>
                  )}
                  {may.bind && (
                    <button type="button" className="danger" disabled={action.busy} onClick={() => void unbind(b)}>
                      Unbind {name}
                    </button>
                  )}
                  {b.error && <p className="error">{b.error}</p>}
                </>
              );
            },
          },
          { header: 'Enrolled', cell: (b) => (b.clusterStatus.isImported ? 'Yes' : 'No (offline)') },
          { header: 'Tags', cell: (b) => b.clusterStatus.tags.join(', ') || '—' },
          {
            header: 'Also licensed by',
            cell: (b) =>
              b.duplicateContractFeatures.length
                ? b.duplicateContractFeatures.map((d) => `contract ${d.contractId} (${d.features.join(', ')})`).join('; ')
                : '—',
          },
        ]}
      />
      <Outcome action={action} />
    </Section>
  );
}

const OTHER = '';

export function BindCluster({ routes, contract }: Pick<Props, 'routes' | 'contract'>) {
  // Asked again with everything of the contract when its clusters change: the inventory less what is bound.
  const unbound = useUnboundClusters(routes, contract.id);
  const action = useAction();
  const binding = useContractChange(routes, (clusters: { cluster: string; displayName?: string }[]) => routes.bind(contract.id, clusters));
  const choices: [string, string][] = (unbound.data ?? []).map((c) => [c.uid, `${c.displayName || c.name} (${c.uid})`]);
  return (
    <Section title="Bind a cluster">
      {unbound.error ? <ErrorMessage error={unbound.error} /> : null}
      {unbound.data?.length === 0 && (
        <p className="muted">No cluster of the owner's inventory is left to bind; another is bound by its UUID.</p>
      )}
      <Form
        label="Bind a cluster"
        submitLabel="Bind cluster"
        action={action}
        validate={(data) => {
          const uuid = text(data, 'uuid') || text(data, 'cluster');
          if (!uuid) return 'Choose a cluster, or give its UUID';
          if (!isUuid(uuid)) return `Cluster UUID: "${uuid}" is not a UUID`;
          if (contract.clusters.some((b) => b.cluster.toLowerCase() === uuid.toLowerCase())) return 'That cluster is bound already';
        }}
        submit={async (data) => {
          const cluster = (text(data, 'uuid') || text(data, 'cluster')).toLowerCase();
          const displayName = text(data, 'displayName');
          await binding.mutateAsync([{ cluster, ...(displayName ? { displayName } : {}) }]);
          const known = unbound.data?.find((c) => c.uid.toLowerCase() === cluster);
          return `Bound ${displayName || known?.name || cluster}`;
        }}
      >
        <Select label="Inventory cluster" name="cluster" options={[...choices, [OTHER, 'Another cluster, by its UUID']]} />
        <Field label="Cluster UUID" name="uuid" hint="Only for a cluster not in the list (an air-gapped one)" />
        <Field label="Display name" name="displayName" hint="Optional: its name on this contract" />
      </Form>
    </Section>
  );
}
