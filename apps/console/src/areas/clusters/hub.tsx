import { useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { ErrorMessage, Section, Show, when } from '../../ui';
import { useHubs, useMayManageHub, useSets, useSpokes, type Hub, type HubRef } from './api';
import { ClusterSetPanel } from './cluster-set';
import { ClusterSetsSection } from './cluster-sets';
import { featureList, phaseOf } from './hubs';
import { NamespacesSection } from './namespaces';
import { SpokesTable } from './spokes';

/**
 * `/orgs/:org/clusters/:cluster`: one hub. The set shown in detail is `?set=` (a link per set, so it can be
 * bookmarked and the back button works); without it, the first set.
 */
export function HubScreen({ org }: { org: string }) {
  const { cluster = '' } = useParams();
  const hubs = useHubs(org);
  return (
    <>
      <nav aria-label="Breadcrumb">
        <p>
          <Link to={`/orgs/${encodeURIComponent(org)}/clusters`}>Hub clusters</Link> / {cluster}
        </p>
      </nav>
      <Show loaded={hubs}>
        {(list) => {
          const hub = list.find((h) => h.name === cluster);
          return hub ? (
            <HubPage key={hub.uid} hub={hub} owner={org} />
          ) : (
            <ErrorMessage error={`No hub cluster named ${cluster} in ${org}.`} />
          );
        }}
      </Show>
    </>
  );
}

function HubPage({ hub, owner }: { hub: Hub; owner: string }) {
  const ref: HubRef = { owner, cluster: hub.name };
  const [search, setSearch] = useSearchParams();
  // Every change on the page invalidates the whole hub (useHubChange): sets, clusters, features and namespaces
  // depend on each other.
  const sets = useSets(ref);
  const spokes = useSpokes(ref);
  const mayManage = useMayManageHub(owner);
  // A set just deleted leaves at once, before the list is loaded again: its panel must not ask for it any more.
  const [deleted, setDeleted] = useState<string>();
  const names = (sets.data?.map((s) => s.clusterSetName) ?? []).filter((name) => name !== deleted);
  const asked = search.get('set');
  const selected = asked && names.includes(asked) ? asked : names[0];

  return (
    <>
      <HubSummary hub={hub} />
      <Section title="Managed clusters">
        <Show loaded={spokes}>{(list) => <SpokesTable caption={`Managed clusters of ${hub.name}`} spokes={list} />}</Show>
      </Section>
      <Show loaded={sets}>
        {(list) => (
          <ClusterSetsSection
            hub={ref}
            sets={list.filter((s) => s.clusterSetName !== deleted)}
            managed={spokes.data ?? []}
            selected={selected}
            mayManage={mayManage}
            onCreated={(set) => {
              setDeleted(undefined);
              setSearch({ set });
            }}
            onDeleted={(set) => {
              setDeleted(set);
              if (set === selected) setSearch({});
            }}
          />
        )}
      </Show>
      {selected && <ClusterSetPanel key={selected} hub={ref} set={selected} mayManage={mayManage} />}
      <NamespacesSection hub={ref} sets={names} selected={selected} mayManage={mayManage} />
    </>
  );
}

function HubSummary({ hub }: { hub: Hub }) {
  const facts: [string, string][] = [
    ['Display name', hub.displayName || '—'],
    ['UID', hub.uid],
    ['Provider', hub.provider || '—'],
    ['Kubernetes', hub.kubernetesVersion || '—'],
    ['Nodes', String(hub.nodeCount)],
    ['Status', phaseOf(hub)],
    ['Manager endpoint', hub.managerEndpoint || '—'],
    ['Platform features', featureList(hub)],
    ['Enrolled', when(hub.createdAt)],
  ];
  return (
    <Section title={`Hub cluster ${hub.name}`}>
      <dl className="grid">
        {facts.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{term === 'UID' ? <code>{value}</code> : value}</dd>
          </div>
        ))}
      </dl>
    </Section>
  );
}
