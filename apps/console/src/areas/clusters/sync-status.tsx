import { Outcome, Show, Table, useAction } from '../../ui';
import { clustersApi, memberSync, useHubChange, useSetSync, type HubRef } from './api';

interface FeatureRow {
  featureSet: string;
  feature: string;
  insync: string[];
  unaligned: string[];
}

/**
 * A cluster set's sync status (its release, each member's agent release, each feature) and its auto-update, the
 * trigger offered to those who may manage the hub.
 */
export function SyncStatus({ hub, set, mayManage }: { hub: HubRef; set: string; mayManage: boolean }) {
  const status = useSetSync(hub, set);
  const reload = () => void status.refetch();
  const updating = useHubChange(hub, () => clustersApi.autoUpdate(hub, set));

  // One action for check and trigger, so the status line tells the latest of the two.
  const auto = useAction();
  const checkAutoUpdate = () =>
    auto.run(async () => {
      const { possible } = await clustersApi.autoUpdateCheck(hub, set);
      reload();
      return possible
        ? `Auto-update of ${set} is possible: every cluster runs the latest agent release.`
        : `Auto-update of ${set} is not possible yet: not every cluster runs the latest agent release.`;
    });
  const autoUpdate = () =>
    auto.run(async () => {
      const triggered = await updating.mutateAsync(undefined);
      return `${triggered.message}.`;
    });

  return (
    <>
      <h3>Sync status of {set}</h3>
      <Show loaded={status}>
        {({ sync, possible }) => {
          const features: FeatureRow[] = Object.entries(sync.features).flatMap(([featureSet, byFeature]) =>
            Object.entries(byFeature).map(([feature, s]) => ({
              featureSet,
              feature,
              insync: s.insyncClusters,
              unaligned: s.unalignedClusters,
            })),
          );
          return (
            <>
              <p>
                Release of the set: <strong>{sync.versions.clusterSetVersion || '—'}</strong>
              </p>
              <Table
                caption={`Agent versions in ${set}`}
                rows={sync.versions.clusters}
                rowKey={(c) => c.name}
                empty="No cluster in the set."
                columns={[
                  { header: 'Cluster', cell: (c) => c.name },
                  { header: 'Agent version', cell: (c) => memberSync(sync, c.name).version },
                  { header: 'Sync status', cell: (c) => memberSync(sync, c.name).status },
                ]}
              />
              <Table
                caption={`Feature sync status in ${set}`}
                rows={features}
                rowKey={(r) => `${r.featureSet}/${r.feature}`}
                empty="No feature installed on the set."
                columns={[
                  { header: 'Feature set', cell: (r) => r.featureSet },
                  { header: 'Feature', cell: (r) => r.feature },
                  { header: 'In sync', cell: (r) => r.insync.join(', ') || '—' },
                  {
                    header: 'Unaligned',
                    cell: (r) => (r.unaligned.length ? <span className="error">{r.unaligned.join(', ')}</span> : '—'),
                  },
                ]}
              />
              <h3>Auto-update of {set}</h3>
              <p>
                {possible
                  ? 'Possible: every cluster of the set runs the latest agent release, so the set can move to the latest release.'
                  : 'Not possible yet: auto-update needs every cluster of the set on the latest agent release (install the platform core feature set to upgrade the agents).'}
              </p>
            </>
          );
        }}
      </Show>
      <p>
        <button type="button" onClick={reload}>
          Refresh sync status of {set}
        </button>{' '}
        <button type="button" disabled={auto.busy} onClick={() => void checkAutoUpdate()}>
          Check auto-update for {set}
        </button>
        {mayManage && (
          <>
            {' '}
            <button type="button" className="primary" disabled={auto.busy} onClick={() => void autoUpdate()}>
              Auto-update {set}
            </button>
          </>
        )}
      </p>
      <Outcome action={auto} />
    </>
  );
}
