import { Link } from 'react-router';
import { Section, Show, Table, instant, when } from '../../ui';
import { hubHref, useHubs, useSpokes, type Hub } from './api';
import { SpokesTable } from './spokes';

/** The phase a hub's free-form Kubernetes-style status reports, if any. */
export function phaseOf(hub: Hub): string {
  const phase = hub.status?.phase;
  return typeof phase === 'string' && phase ? phase : '—';
}

/** The platform features installed on a cluster, with their versions. */
export function featureList(hub: Hub): string {
  return hub.features.length ? hub.features.map((f) => `${f.name} ${f.version}`).join(', ') : '—';
}

/** `/orgs/:org/clusters`: the organization's hub clusters, then each hub's managed clusters. */
export function HubsScreen({ org }: { org: string }) {
  const hubs = useHubs(org);
  return (
    <Show loaded={hubs}>
      {(list) => (
        <>
          <Section title="Hub clusters">
            <Table
              caption={`Hub clusters of ${org}`}
              rows={list}
              rowKey={(h) => h.uid}
              empty="No hub cluster is enrolled in this organization yet."
              columns={[
                { header: 'Hub', cell: (h) => <Link to={hubHref(org, h.name)}>{h.name}</Link> },
                { header: 'Display name', cell: (h) => h.displayName || '—' },
                { header: 'Provider', cell: (h) => h.provider || '—' },
                { header: 'Kubernetes', cell: (h) => h.kubernetesVersion || '—' },
                { header: 'Nodes', cell: (h) => h.nodeCount },
                { header: 'Status', cell: phaseOf },
                { header: 'Platform features', cell: featureList },
                { header: 'Enrolled', cell: (h) => when(h.createdAt), value: (h) => instant(h.createdAt) },
              ]}
            />
          </Section>
          {list.map((h) => (
            <HubSpokes key={h.uid} org={org} hub={h.name} />
          ))}
        </>
      )}
    </Show>
  );
}

function HubSpokes({ org, hub }: { org: string; hub: string }) {
  const spokes = useSpokes({ owner: org, cluster: hub });
  return (
    <Section title={`Managed clusters of ${hub}`} actions={<Link to={hubHref(org, hub)}>Cluster sets of {hub}</Link>}>
      <Show loaded={spokes}>{(list) => <SpokesTable caption={`Managed clusters of ${hub}`} spokes={list} />}</Show>
    </Section>
  );
}
