import { Outcome, Section, Show, Table, useAction } from '../../ui';
import { clustersApi, useHubChange, useSetMembers, type HubRef } from './api';
import { FeatureSets } from './feature-sets';
import { SyncStatus } from './sync-status';

/**
 * One cluster set of a hub: its clusters (add, remove), its feature sets, its sync status and auto-update; the
 * changes offered to those who may manage the hub.
 */
export function ClusterSetPanel({ hub, set, mayManage }: { hub: HubRef; set: string; mayManage: boolean }) {
  const members = useSetMembers(hub, set);
  const change = useAction();
  const adding = useHubChange(hub, (cluster: string) => clustersApi.addClusters(hub, set, [cluster]));
  const removing = useHubChange(hub, (cluster: string) => clustersApi.removeClusters(hub, set, [cluster]));

  const add = (cluster: string) =>
    change.run(async () => {
      await adding.mutateAsync(cluster);
      return `Added ${cluster} to ${set}.`;
    });
  const remove = (cluster: string) =>
    change.run(async () => {
      await removing.mutateAsync(cluster);
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
              empty={mayManage ? 'No cluster yet: add one below.' : 'No cluster yet.'}
              columns={[
                { header: 'Cluster', cell: (c) => c.name },
                { header: 'Display name', cell: (c) => c.displayName || '—' },
                { header: 'Provider', cell: (c) => c.provider || '—' },
                { header: 'Kubernetes', cell: (c) => c.kubernetesVersion || '—' },
                { header: 'Nodes', cell: (c) => c.clusterNode },
                ...(mayManage
                  ? [
                      {
                        header: 'Actions',
                        cell: (c: (typeof inSet)[number]) => (
                          <button type="button" className="danger" disabled={change.busy} onClick={() => void remove(c.name)}>
                            Remove {c.name} from {set}
                          </button>
                        ),
                      },
                    ]
                  : []),
              ]}
            />
            {mayManage && <h3>Add clusters to {set}</h3>}
            {!mayManage ? null : addable.length ? (
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
      <FeatureSets hub={hub} set={set} mayManage={mayManage} />
      <SyncStatus hub={hub} set={set} mayManage={mayManage} />
    </Section>
  );
}
