import { useState } from 'react';
import { Link } from 'react-router';
import { Field, Form, Outcome, Section, Table, useAction } from '../../ui';
import { clustersApi, dnsLabelProblem, useHubChange, type ClusterSet, type HubRef, type ManagedCluster } from './api';

/**
 * The hub's cluster sets: the list (each with "Manage" and "Delete"), and the form that creates one, optionally
 * with managed clusters that are in no set yet (a cluster is in one set at most). Deleting and creating are offered
 * to those who may manage the hub.
 */
export function ClusterSetsSection({
  hub,
  sets,
  managed,
  selected,
  mayManage,
  onCreated,
  onDeleted,
}: {
  hub: HubRef;
  sets: ClusterSet[];
  managed: ManagedCluster[];
  selected: string | undefined;
  mayManage: boolean;
  onCreated: (set: string) => void;
  onDeleted: (set: string) => void;
}) {
  const remove = useAction();
  const [confirming, setConfirming] = useState<string>();
  const free = managed.filter((c) => !c.clusterSet).map((c) => c.name);
  const deletion = useHubChange(
    hub,
    (set: string) => clustersApi.deleteSet(hub, set),
    (set) => set,
  );

  const deleteSet = (set: string) =>
    remove.run(async () => {
      await deletion.mutateAsync(set);
      setConfirming(undefined);
      onDeleted(set);
      return `Deleted cluster set ${set}; its clusters stay managed by ${hub.cluster}.`;
    });

  return (
    <Section title="Cluster sets">
      <Table
        caption={`Cluster sets of ${hub.cluster}`}
        rows={sets}
        rowKey={(s) => s.clusterSetName}
        empty="No cluster set yet: create one below."
        columns={[
          { header: 'Cluster set', cell: (s) => (s.clusterSetName === selected ? <strong>{s.clusterSetName}</strong> : s.clusterSetName) },
          { header: 'Title', cell: (s) => s.clusterSetTitle || <span className="muted">—</span> },
          { header: 'Clusters', cell: (s) => s.clusters },
          {
            header: 'Actions',
            cell: (s) =>
              confirming === s.clusterSetName ? (
                <span role="group" aria-label={`Confirm deleting ${s.clusterSetName}`}>
                  Delete {s.clusterSetName}? Its clusters stay managed by the hub.{' '}
                  <button type="button" className="danger" disabled={remove.busy} onClick={() => void deleteSet(s.clusterSetName)}>
                    Yes, delete {s.clusterSetName}
                  </button>{' '}
                  <button type="button" onClick={() => setConfirming(undefined)}>
                    Cancel
                  </button>
                </span>
              ) : (
                <>
                  <Link
                    to={`?set=${encodeURIComponent(s.clusterSetName)}`}
                    aria-current={s.clusterSetName === selected ? 'true' : undefined}
                  >
                    Manage {s.clusterSetName}
                  </Link>
                  {mayManage && (
                    <>
                      {' '}
                      <button type="button" className="danger" onClick={() => setConfirming(s.clusterSetName)}>
                        Delete {s.clusterSetName}
                      </button>
                    </>
                  )}
                </>
              ),
          },
        ]}
      />
      <Outcome action={remove} />
      {mayManage && <NewClusterSet hub={hub} free={free} onCreated={onCreated} />}
    </Section>
  );
}

function NewClusterSet({ hub, free, onCreated }: { hub: HubRef; free: string[]; onCreated: (set: string) => void }) {
  const create = useAction();
  const creation = useHubChange(hub, ({ name, clusters }: { name: string; clusters: string[] }) =>
    clustersApi.createSet(hub, name, clusters),
  );
  return (
    <>
      <h3>New cluster set</h3>
      <Form
        label="Create cluster set"
        submitLabel="Create cluster set"
        action={create}
        validate={(d) => dnsLabelProblem(String(d.get('clusterSet') ?? '').trim(), 'Cluster set name')}
        submit={async (d) => {
          const name = String(d.get('clusterSet')).trim();
          const clusters = d.getAll('clusters').map(String);
          await creation.mutateAsync({ name, clusters });
          onCreated(name);
          return clusters.length ? `Created cluster set ${name} with ${clusters.join(', ')}.` : `Created cluster set ${name}.`;
        }}
      >
        <Field
          label="Cluster set name"
          name="clusterSet"
          required
          placeholder="e.g. production"
          hint="Lower-case letters, digits and hyphens"
          autoComplete="off"
        />
        {free.length > 0 && (
          <fieldset>
            <legend>Clusters to put in the new set (optional; only clusters in no set)</legend>
            {free.map((name) => (
              <label key={name}>
                <input type="checkbox" name="clusters" value={name} />
                {name}
              </label>
            ))}
          </fieldset>
        )}
      </Form>
    </>
  );
}
