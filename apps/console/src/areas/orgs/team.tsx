import { useQuery } from '@tanstack/react-query';
import { useNavigate, useParams } from 'react-router';
import { ErrorMessage, Form, joined, Outcome, Section, Show, Table, useAction } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import {
  fetchTeam,
  fetchTeamMembers,
  orgKeys,
  useAddTeamMember,
  useAllowed,
  useDeleteTeam,
  useEditTeam,
  useOrgAllowed,
  useRemoveTeamMember,
  useRoles,
} from './api';
import { loginProblem, text } from './names';
import { isOwnerTeam, namesById, roleIdsOf, roleUntilOf, useOrgName, type Role, type Team, type User } from './org-data';
import { TeamFields, teamBody, teamProblem } from './team-form';
import { UserPicker } from './user-picker';
import { orgPath } from './org-list';

/** `/orgs/:org/teams/:teamid`: one team, its roles and permission to edit, its members to add and remove. */
export function TeamPage() {
  const org = useOrgName();
  const teamid = Number(useParams().teamid);
  const valid = Number.isInteger(teamid) && teamid > 0;
  const team = useQuery({ queryKey: orgKeys.team(org, teamid), queryFn: () => fetchTeam(teamid), enabled: valid });
  const loaded = joined({ team, roles: useRoles(org) });
  const may = useTeamAllowed(org, valid ? teamid : undefined);
  return (
    <>
      <OrgNav org={org} />
      {!valid ? (
        <ErrorMessage error="No such team: the team id is not a positive integer." />
      ) : (
        <Show loaded={loaded}>
          {({ team, roles }) =>
            team.organization && team.organization.username !== org ? (
              <ErrorMessage error={`Team ${team.name} belongs to ${team.organization.username}, not ${org}.`} />
            ) : (
              <>
                <TeamSummary team={team} roles={roles} />
                <TeamMembers org={org} team={team} may={may(team)} />
                {may(team)('edit') && <EditTeam org={org} team={team} roles={roles} />}
                {!isOwnerTeam(team) && may(team)('delete') && <DeleteTeam org={org} team={team} />}
              </>
            )
          }
        </Show>
      )}
    </>
  );
}

/**
 * What the caller may do on a team: its relations on the team (`edit`, `delete`, `add_member`, `remove_member`), and
 * on the owner team only with `manage_owners` on the organization as well (only owners change the owners).
 */
function useTeamAllowed(org: string, teamid: number | undefined) {
  const onTeam = useAllowed(org, 'team', teamid);
  const onOrg = useOrgAllowed(org);
  return (team: Team) => (relation: string) => onTeam(relation) && (!isOwnerTeam(team) || onOrg('manage_owners'));
}

function TeamSummary({ team, roles }: { team: Team; roles: Role[] }) {
  return (
    <Section title={`Team ${team.name}`}>
      <dl>
        <dt>Description</dt>
        <dd>{team.description || '—'}</dd>
        <dt>Permission</dt>
        <dd>{team.permission}</dd>
        <dt>Type</dt>
        <dd>{team.type}</dd>
        <dt>Custom roles</dt>
        <dd>{roleList(team, roles)}</dd>
      </dl>
    </Section>
  );
}

/** The team's roles by name, each time-bound one with its end: `auditor (until 2027-01-01 00:00 UTC)`. */
function roleList(team: Team, roles: Role[]): string {
  const names = namesById(roles);
  const until = roleUntilOf(team);
  const ids = roleIdsOf(team);
  if (!ids.length) return '—';
  return ids
    .map((id) => {
      const name = names.get(id) ?? `#${id}`;
      return until[id] ? `${name} (until ${new Date(until[id]).toISOString().slice(0, 16).replace('T', ' ')} UTC)` : name;
    })
    .join(', ');
}

function TeamMembers({ org, team, may }: { org: string; team: Team; may: (relation: string) => boolean }) {
  const teamid = team.id;
  const members = useQuery({ queryKey: orgKeys.teamMembers(org, teamid), queryFn: () => fetchTeamMembers(teamid) });
  const action = useAction();
  const add = useAction();
  const adding = useAddTeamMember(org);
  const removal = useRemoveTeamMember(org);
  const owner = isOwnerTeam(team);
  const remove = (u: User) =>
    action.run(async () => {
      await removal.mutateAsync({ teamid, username: u.login });
      return `Removed ${u.login} from ${team.name}.`;
    });
  return (
    <Section title={`Members of ${team.name}`}>
      <Show loaded={members}>
        {(list) => (
          <Table
            caption={`Members of team ${team.name} (${list.length})`}
            rows={list}
            rowKey={(u) => u.id}
            columns={[
              { header: 'Login', cell: (u) => u.login },
              { header: 'Full name', cell: (u) => u.full_name || '—' },
              { header: 'Email', cell: (u) => u.email || '—' },
              ...(may('remove_member')
                ? [
                    {
                      header: 'Actions',
                      cell: (u: User) => (
                        <button type="button" className="danger" disabled={action.busy} onClick={() => void remove(u)}>
                          Remove {u.login}
                        </button>
                      ),
                    },
                  ]
                : []),
            ]}
          />
        )}
      </Show>
      <Outcome action={action} />
      {may('add_member') && (
        <Form
          action={add}
          label={`Add a member to ${team.name}`}
          submitLabel="Add to team"
          validate={(data) => loginProblem('Username', text(data, 'username'))}
          submit={async (data) => {
            const username = text(data, 'username');
            // On the owner team the flag connects the new owner to the organization's clusters (cluster-admin);
            // left out, an existing connection stays as it is.
            const connect = owner && data.get('autoConnectClusters') === 'true';
            await adding.mutateAsync({ teamid, username, connect });
            return `Added ${username} to ${team.name}.`;
          }}
        >
          <UserPicker label="Username" name="username" hint="Type part of a login or full name, then pick the user" />
          {owner && (
            <label>
              <input type="checkbox" name="autoConnectClusters" value="true" /> Connect to the organization's clusters (cluster-admin)
            </label>
          )}
        </Form>
      )}
    </Section>
  );
}

function EditTeam({ org, team, roles }: { org: string; team: Team; roles: Role[] }) {
  const action = useAction();
  const editing = useEditTeam(org);
  return (
    <Section title="Edit team">
      <Form
        action={action}
        label={`Edit team ${team.name}`}
        submitLabel="Save team"
        validate={(data) => teamProblem(data, roles, team)}
        submit={async (data) => {
          const saved = await editing.mutateAsync({ teamid: team.id, body: teamBody(data, team) });
          return `Saved team ${saved.name}.`;
        }}
      >
        {/* New fields after a save, so they show what the API now holds (the form itself keeps its outcome). */}
        <TeamFields key={JSON.stringify(team)} roles={roles} team={team} />
      </Form>
    </Section>
  );
}

function DeleteTeam({ org, team }: { org: string; team: Team }) {
  const action = useAction();
  const deletion = useDeleteTeam(org);
  const navigate = useNavigate();
  return (
    <Section title="Delete team">
      <p className="muted">Its members leave it (and the organization, when it was their last team); its custom roles are detached.</p>
      <button
        type="button"
        className="danger"
        disabled={action.busy}
        onClick={() =>
          void action.run(async () => {
            await deletion.mutateAsync(team.id);
            void navigate(`${orgPath(org)}/teams`);
          })
        }
      >
        Delete team {team.name}
      </button>
      <Outcome action={action} />
    </Section>
  );
}
