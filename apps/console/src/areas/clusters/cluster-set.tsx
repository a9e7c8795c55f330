import { Outcome, Section, Show, Table, useAction } from '../../ui';
import { clustersApi, type HubRef } from './cluster-api';
import { FeatureSets } from './feature-sets';
import { useLoadAfter } from './reload';
import { SyncStatus } from './sync-status';

/** One cluster set of a hub: its clusters (add, remove), its feature sets, its sync status and auto-update. */
export function ClusterSetPanel({ hub, set, revision, onChanged }: { hub: HubRef; set: string; revision: number; onChanged: () => void }) {
  const members = useLoadAfter(
    () => Promise.all([clustersApi.members(hub, set), clustersApi.addable(hub, set)]).then(([inSet, addable]) => ({ inSet, addable })),
    [hub.owner, hub.cluster, set],
    revision,
  );
  const change = useAction();

  const add = (cluster: string) =>
    change.run(async () => {
      await clustersApi.addClusters(hub, set, [cluster]);
      onChanged();
      return `Added ${cluster} to ${set}.`;
    });
  const remove = (cluster: string) =>
    change.run(async () => {
      await clustersApi.removeClusters(hub, set, [cluster]);
      onChanged();
      return `Removed ${cluster} from ${set}; it stays managed by ${hub.cluster} and runs what it runs.`;
    });

  return (
    <Section title={`Cluster set ${set}`}>
      <Show loaded={members}>
        {({ inSet, addable }) => (
          <>
            <Table
              caption={`Clusters in ${set}`}
              rows={inSet}
              rowKey={(c) => c.name}
              empty="No cluster yet: add one below."
              columns={[
                { header: 'Cluster', cell: (c) => c.name },
                { header: 'Display name', cell: (c) => c.displayName || '—' },
                { header: 'Provider', cell: (c) => c.provider || '—' },
                { header: 'Kubernetes', cell: (c) => c.kubernetesVersion || '—' },
                { header: 'Nodes', cell: (c) => c.clusterNode },
                {
                  header: 'Actions',
                  cell: (c) => (
                    <button type="button" className="danger" disabled={change.busy} onClick={() => void remove(c.name)}>
                      Remove {c.name} from {set}
                    </button>
                  ),
                },
              ]}
            />
            <h3>Add clusters to {set}</h3>
            {addable.length ? (
              <ul>
                {addable.map((name) => (
                  <li key={name}>
                    <button type="button" disabled={change.busy} onClick={() => void add(name)}>
                      Add {name} to {set}
                    </button>
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted">Every managed cluster of {hub.cluster} is in a cluster set: remove one from its set to add it here.</p>
            )}
          </>
        )}
      </Show>
      <Outcome action={change} />
      <FeatureSets hub={hub} set={set} revision={revision} onChanged={onChanged} />
      <SyncStatus hub={hub} set={set} revision={revision} onChanged={onChanged} />
    </Section>
  );
}
