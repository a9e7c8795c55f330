import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { Form, joined, Outcome, Section, Show, Table, useAction } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { fetchPrincipals, orgKeys, useCatalog, useCreateRole, useDeleteRole, useOrgAllowed, useRoles, useTeams } from './api';
import { orgPath } from './org-list';
import { nameList, namesById, useOrgName, type Role, type Team } from './org-data';
import { permissionName, RoleFields, roleBody, roleProblem, type Catalog } from './role-form';

export function rolePath(org: string, id: number): string {
  return `${orgPath(org)}/roles/${id}`;
}

/** The permission catalog, the teams (to assign) and the roles of an organization: what every role screen needs. */
export function useRoleData(org: string) {
  const catalog = useCatalog(org);
  const teams = useTeams(org);
  const roles = useRoles(org);
  return joined({ catalog, teams, roles });
}

/**
 * The teams a role is assigned to and the users it reaches through them (`GET /authz/roles/{id}/principals`); a
 * change of roles, teams or membership invalidates it with the rest of the organization.
 */
export function usePrincipals(org: string, role: Role) {
  const { id } = role;
  return useQuery({ queryKey: orgKeys.principals(org, id), queryFn: () => fetchPrincipals(org, id) });
}

/** `/orgs/:org/roles`: the custom roles, who holds each, creating and deleting them. */
export function Roles() {
  const org = useOrgName();
  const data = useRoleData(org);
  const can = useOrgAllowed(org);
  return (
    <>
      <OrgNav org={org} />
      <Show loaded={data}>
        {({ catalog, teams, roles }) => (
          <>
            <Section title="Custom roles">
              <RoleTable org={org} roles={roles} teams={teams} mayDelete={can('delete_role')} />
            </Section>
            {can('create_role') && <CreateRole org={org} catalog={catalog} teams={teams} />}
          </>
        )}
      </Show>
    </>
  );
}

function RoleTable({ org, roles, teams, mayDelete }: { org: string; roles: Role[]; teams: Team[]; mayDelete: boolean }) {
  const action = useAction();
  const deletion = useDeleteRole(org);
  const teamNames = namesById(teams);
  const remove = (role: Role) =>
    action.run(async () => {
      await deletion.mutateAsync(role.id);
      return `Deleted role ${role.name} and every grant it carried.`;
    });
  return (
    <>
      <Table
        caption={`Custom roles of ${org} (${roles.length})`}
        rows={roles}
        rowKey={(r) => r.id}
        columns={[
          { header: 'Name', cell: (r) => <Link to={rolePath(org, r.id)}>{r.name}</Link> },
          { header: 'Description', cell: (r) => r.description || '—' },
          { header: 'Permissions', cell: (r) => r.permissions.map(permissionName).join(', ') || '—' },
          { header: 'Teams', cell: (r) => nameList(r.team_ids, teamNames) },
          { header: 'Held by', cell: (r) => <Holders org={org} role={r} />, sortable: false },
          ...(mayDelete
            ? [
                {
                  header: 'Actions',
                  cell: (r: Role) => (
                    <button type="button" className="danger" disabled={action.busy} onClick={() => void remove(r)}>
                      Delete role {r.name}
                    </button>
                  ),
                },
              ]
            : []),
        ]}
      />
      <Outcome action={action} />
    </>
  );
}

/** The users a role reaches, in short, for the list (the role's page lists its principals in full). */
function Holders({ org, role }: { org: string; role: Role }) {
  const principals = usePrincipals(org, role);
  if (principals.error) return <span className="muted">?</span>;
  if (!principals.data) return <span className="muted">…</span>;
  const users = principals.data.filter((p) => p.type === 'user');
  return <>{users.length ? users.map((u) => u.name ?? `#${u.id}`).join(', ') : 'no one'}</>;
}

function CreateRole({ org, catalog, teams }: { org: string; catalog: Catalog; teams: Team[] }) {
  const action = useAction();
  const creation = useCreateRole(org);
  return (
    <Section title="Create role">
      <p className="muted">
        A role gives its permissions to every member of the teams it is assigned to. No one gives more than they hold: the API refuses (403)
        a permission you do not hold yourself.
      </p>
      <Form
        action={action}
        label="Create role"
        submitLabel="Create role"
        validate={roleProblem}
        submit={async (data) => {
          const role = await creation.mutateAsync(roleBody(data, catalog));
          return `Created role ${role.name}.`;
        }}
      >
        <RoleFields catalog={catalog} teams={teams} />
      </Form>
    </Section>
  );
}
