import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiError, ok, type Schema } from '../../api/client';
import { Form, Section, Select, Show, Table, useAction, when } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { orgKeys, useOrg, useOrgAllowed } from './api';
import { useOrgName } from './org-data';

export type WhoHasAccess = Schema<'WhoHasAccessResponse'>;
type Permission = WhoHasAccess['permissions'][number];
type Holder = Permission['users'][number];
type Path = Holder['paths'][number];
type Kind = 'organization' | 'contract' | 'cluster';

/** An object of the organization one may ask about, by its name: the organization, a contract, a cluster. */
export interface AccessObject {
  objectType: Kind;
  objID: string;
  /** How it is named on the screen: "the organization demo", "contract Demo enterprise", "cluster prod-eastus". */
  name: string;
}

/** Who holds each permission of the organization, or of one of its contracts or clusters, and through what. */
export const fetchAccess = (org: string, objectType: Kind, objID: string) =>
  ok(api.GET('/authz/objects/{objectType}/{objID}/access', { params: { path: { objectType, objID }, query: { org } } }));

/** A list this deployment may not serve (contracts are hosted deployments' only: 404 elsewhere) is an empty one. */
const noneWhenMissing = <T,>(call: Promise<T[]>): Promise<T[]> =>
  call.catch((err: unknown) => {
    if (err instanceof ApiError && err.status === 404) return [];
    throw err;
  });

/**
 * The contracts and clusters of the organization, by name, to pick from: its contracts, its hubs and the clusters
 * each hub manages (the objects `GET /authz/objects/{type}/{id}/access` answers for).
 */
export async function fetchAccessObjects(org: string): Promise<AccessObject[]> {
  const [contracts, hubs] = await Promise.all([
    noneWhenMissing(ok(api.GET('/user/contracts', { params: { query: { org } } }))),
    ok(api.GET('/orgs/{orgname}/clusters', { params: { path: { orgname: org } } })),
  ]);
  const managed = await Promise.all(
    hubs.map((hub) =>
      noneWhenMissing(
        ok(api.GET('/clusters/{owner}/{cluster}/available-clusters', { params: { path: { owner: org, cluster: hub.name } } })),
      ).then((clusters) =>
        clusters.map((c) => ({ objectType: 'cluster' as const, objID: c.uid, name: `cluster ${c.name}, managed by ${hub.name}` })),
      ),
    ),
  );
  return [
    ...contracts.map((c) => ({ objectType: 'contract' as const, objID: String(c.id), name: `contract ${c.name || c.id} (${c.product})` })),
    ...hubs.map((h) => ({ objectType: 'cluster' as const, objID: h.uid, name: `cluster ${h.name} (hub)` })),
    ...managed.flat(),
  ];
}

/** One path in words: "owner through team Owners", "role Editors through team devs, until 1 Jan 2027", "member". */
export function pathText(p: Path): string {
  const team = p.team_id ? ` through team ${p.team_name ?? `#${p.team_id}`}` : '';
  switch (p.kind) {
    case 'owner':
      return `owner${team}`;
    case 'site_admin':
      return 'site admin';
    case 'role':
      return `role ${p.role_name ?? `#${p.role_id}`}${team}${p.until ? `, until ${when(p.until)}` : ''}`;
    default:
      return `${p.relation ?? 'relation'}${team}`;
  }
}

const keyOf = (o: Pick<AccessObject, 'objectType' | 'objID'>) => `${o.objectType}:${o.objID}`;

/**
 * `/orgs/:org/access`: for owners and site admins, every user holding each permission of the organization (or of a
 * contract or cluster it owns, picked below by name) with the paths that give it, each permission named as the
 * catalog names it and said in its words. Anyone else gets the "no access" page (the tab's, `OrgNav`), as the API
 * would refuse them.
 */
export function Access() {
  const org = useOrgName();
  const orgId = useOrg(org).data?.id;
  const can = useOrgAllowed(org);
  const owner = can('manage_owners');
  const whole: AccessObject | undefined =
    orgId === undefined ? undefined : { objectType: 'organization', objID: String(orgId), name: `the organization ${org}` };
  const objects = useQuery({ queryKey: orgKeys.accessObjects(org), enabled: owner, queryFn: () => fetchAccessObjects(org) });
  const choices = [...(whole ? [whole] : []), ...(objects.data ?? [])];
  const [picked, setPicked] = useState<AccessObject>();
  const target = picked ?? whole;
  const access = useQuery({
    queryKey: orgKeys.access(org, target?.objectType ?? 'organization', target?.objID ?? ''),
    enabled: target !== undefined && owner,
    queryFn: () => fetchAccess(org, target!.objectType, target!.objID),
  });
  const action = useAction();
  return (
    <>
      <OrgNav org={org} />
      {owner && (
        <>
          <Form
            label="Show access to"
            action={action}
            submitLabel="Show"
            submit={async (data) => {
              const key = String(data.get('object'));
              setPicked(key === (whole && keyOf(whole)) ? undefined : choices.find((o) => keyOf(o) === key));
            }}
          >
            <Select
              // A fresh list once the contracts and clusters are in, and after each pick: it names what is shown.
              key={`${choices.length}:${target ? keyOf(target) : ''}`}
              label="Object"
              name="object"
              defaultValue={target && keyOf(target)}
              options={choices.map((o) => [keyOf(o), o.name[0].toUpperCase() + o.name.slice(1)])}
            />
          </Form>
          {target && <Show loaded={access}>{(answer) => <AccessTable answer={answer} object={target} />}</Show>}
        </>
      )}
    </>
  );
}

function AccessTable({ answer, object }: { answer: WhoHasAccess; object: AccessObject }) {
  const rows = answer.permissions.filter((p) => p.users.length > 0);
  return (
    <Section title={`Who has access to ${object.name}`}>
      <Table
        caption={`Permissions on ${object.name} (${rows.length})`}
        rows={rows}
        rowKey={(p) => p.relation}
        pageSize={100}
        empty="Nobody holds any permission."
        columns={[
          {
            header: 'Permission',
            // The catalog's words first, its name beside them (the name the API's messages and the roles use).
            cell: (p) =>
              p.description ? (
                <>
                  {p.description} <code>{p.permission}</code>
                </>
              ) : (
                <code>{p.permission}</code>
              ),
            value: (p) => `${p.description} ${p.permission}`,
          },
          {
            header: 'Users and how they hold it',
            cell: (p) => (
              <ul className="plain">
                {p.users.map((u) => (
                  <li key={u.id}>
                    <strong>{u.login ?? `user #${u.id}`}</strong>: {u.paths.length ? u.paths.map(pathText).join('; ') : 'another grant'}
                  </li>
                ))}
              </ul>
            ),
          },
        ]}
      />
    </Section>
  );
}
