import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok, type Schema } from '../../api/client';
import { Form, Section, Select, Field, Show, Table, useAction, when } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { orgKeys, useOrg, useOrgAllowed } from './api';
import { useOrgName } from './org-data';

export type WhoHasAccess = Schema<'WhoHasAccessResponse'>;
type Holder = WhoHasAccess['permissions'][number]['users'][number];
type Path = Holder['paths'][number];
type Kind = 'organization' | 'contract' | 'cluster';

/** Who holds each permission of the organization, or of one of its contracts or clusters, and through what. */
export const fetchAccess = (org: string, objectType: Kind, objID: string) =>
  ok(api.GET('/authz/objects/{objectType}/{objID}/access', { params: { path: { objectType, objID }, query: { org } } }));

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

/**
 * `/orgs/:org/access`: for owners and site admins, every user holding each permission of the organization (or of a
 * contract or cluster it owns, picked below) with the paths that give it. Anyone else gets the "no access" page (the
 * tab's, `OrgNav`), as the API would refuse them.
 */
export function Access() {
  const org = useOrgName();
  const orgId = useOrg(org).data?.id;
  const can = useOrgAllowed(org);
  const [object, setObject] = useState<{ objectType: Kind; objID: string }>();
  const target = object ?? (orgId !== undefined ? { objectType: 'organization' as const, objID: String(orgId) } : undefined);
  const access = useQuery({
    queryKey: orgKeys.access(org, target?.objectType ?? 'organization', target?.objID ?? ''),
    enabled: target !== undefined && can('manage_owners'),
    queryFn: () => fetchAccess(org, target!.objectType, target!.objID),
  });
  const action = useAction();
  return (
    <>
      <OrgNav org={org} />
      {can('manage_owners') && (
        <>
          <Form
            label="Show access to"
            action={action}
            submitLabel="Show"
            validate={(data) =>
              data.get('objectType') !== 'organization' && !String(data.get('objID') ?? '').trim()
                ? 'Give the id of the contract or cluster.'
                : undefined
            }
            submit={async (data) => {
              const objectType = String(data.get('objectType')) as Kind;
              setObject(objectType === 'organization' ? undefined : { objectType, objID: String(data.get('objID')).trim() });
            }}
          >
            <Select
              label="Object"
              name="objectType"
              options={[
                ['organization', `The organization ${org}`],
                ['contract', 'A contract'],
                ['cluster', 'A cluster'],
              ]}
            />
            <Field label="Contract or cluster id" name="objID" hint="Left empty for the organization" />
          </Form>
          <Show loaded={access}>{(answer) => <AccessTable answer={answer} />}</Show>
        </>
      )}
    </>
  );
}

function AccessTable({ answer }: { answer: WhoHasAccess }) {
  const rows = answer.permissions.filter((p) => p.users.length > 0);
  return (
    <Section title={`Who has access to ${answer.object}`}>
      <Table
        caption={`Permissions on ${answer.object} (${rows.length})`}
        rows={rows}
        rowKey={(p) => p.relation}
        pageSize={100}
        empty="Nobody holds any permission."
        columns={[
          { header: 'Permission', cell: (p) => p.permission },
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
