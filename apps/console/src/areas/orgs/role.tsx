import { Link, useNavigate, useParams } from 'react-router';
import { ErrorMessage, Form, Outcome, Section, Show, Table, useAction } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { orgPath } from './org-list';
import { useDeleteRole, useEditRole, useOrgAllowed } from './api';
import { useOrgName, type Role, type Team } from './org-data';
import { RoleFields, roleBody, roleProblem, type Catalog } from './role-form';
import { usePrincipals, useRoleData } from './roles';
import { teamPath } from './teams';

/** `/orgs/:org/roles/:id`: one custom role to edit or delete, and who holds it. */
export function RolePage() {
  const org = useOrgName();
  const id = Number(useParams().id);
  const data = useRoleData(org);
  const can = useOrgAllowed(org);
  return (
    <>
      <OrgNav org={org} />
      <Show loaded={data}>
        {({ catalog, teams, roles }) => {
          const role = roles.find((r) => r.id === id);
          if (!role) return <ErrorMessage error={`${org} has no custom role with id ${id}.`} />;
          return (
            <>
              <Principals org={org} role={role} />
              {can('edit_role') && <EditRole org={org} role={role} catalog={catalog} teams={teams} />}
              {can('delete_role') && <DeleteRole org={org} role={role} />}
            </>
          );
        }}
      </Show>
    </>
  );
}

function Principals({ org, role }: { org: string; role: Role }) {
  const principals = usePrincipals(org, role);
  return (
    <Section title={`Who holds ${role.name}`}>
      <Show loaded={principals} part={`who holds ${role.name}`}>
        {(list) => (
          <Table
            caption={`Principals of role ${role.name}`}
            rows={list}
            rowKey={(p) => `${p.type}:${p.id}`}
            empty="not assigned to any team."
            columns={[
              { header: 'Type', cell: (p) => p.type },
              {
                header: 'Name',
                cell: (p) =>
                  p.type === 'team' ? (
                    <Link to={teamPath(org, p.id)}>{p.name ?? `#${p.id}`}</Link>
                  ) : (
                    (p.name ?? `user #${p.id} (no longer exists)`)
                  ),
              },
              {
                header: 'Through teams',
                cell: (p) =>
                  p.type === 'user'
                    ? (p.teams ?? []).map((t) => list.find((q) => q.type === 'team' && q.id === t)?.name ?? `#${t}`).join(', ') ||
                      'directly'
                    : '—',
              },
            ]}
          />
        )}
      </Show>
    </Section>
  );
}

function EditRole({ org, role, catalog, teams }: { org: string; role: Role; catalog: Catalog; teams: Team[] }) {
  const action = useAction();
  const editing = useEditRole(org);
  return (
    <Section title={`Edit role ${role.name}`}>
      <Form
        action={action}
        label={`Edit role ${role.name}`}
        submitLabel="Save role"
        validate={roleProblem}
        submit={async (data) => {
          const saved = await editing.mutateAsync({ id: role.id, body: roleBody(data, catalog) });
          return `Saved role ${saved.name}.`;
        }}
      >
        {/* New fields after a save, so they show what the API now holds (the form keeps its outcome). */}
        <RoleFields key={role.updated_at + role.team_ids.join()} catalog={catalog} teams={teams} role={role} />
      </Form>
    </Section>
  );
}

function DeleteRole({ org, role }: { org: string; role: Role }) {
  const action = useAction();
  const deletion = useDeleteRole(org);
  const navigate = useNavigate();
  return (
    <Section title="Delete role">
      <p className="muted">Every grant the role carried goes with it.</p>
      <button
        type="button"
        className="danger"
        disabled={action.busy}
        onClick={() =>
          void action.run(async () => {
            await deletion.mutateAsync(role.id);
            void navigate(`${orgPath(org)}/roles`);
          })
        }
      >
        Delete role {role.name}
      </button>
      <Outcome action={action} />
    </Section>
  );
}
