import { useNavigate, useParams } from 'react-router';
import { api, ok } from '../../api/client';
import { ErrorMessage, Field, Form, Outcome, Section, Show, Table, useAction, useLoad } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { loginProblem, text } from './names';
import { isOwnerTeam, loadRoles, nameList, namesById, roleIdsOf, useOrgName, type Role, type Team, type User } from './org-data';
import { allPages } from './paging';
import { TeamFields, teamBody, teamProblem } from './team-form';
import { orgPath } from './org-list';

/** `/orgs/:org/teams/:teamid`: one team, its roles and permission to edit, its members to add and remove. */
export function TeamPage() {
  const org = useOrgName();
  const teamid = Number(useParams().teamid);
  const loaded = useLoad(async () => {
    const [team, roles] = await Promise.all([ok(api.GET('/teams/{teamid}', { params: { path: { teamid } } })), loadRoles(org)]);
    return { team, roles };
  }, [org, teamid]);
  return (
    <>
      <OrgNav org={org} />
      {!Number.isInteger(teamid) || teamid <= 0 ? (
        <ErrorMessage error="No such team: the team id is not a positive integer." />
      ) : (
        <Show loaded={loaded}>
          {({ team, roles }) =>
            team.organization && team.organization.username !== org ? (
              <ErrorMessage error={`Team ${team.name} belongs to ${team.organization.username}, not ${org}.`} />
            ) : (
              <>
                <TeamSummary team={team} roles={roles} />
                <TeamMembers team={team} />
                <EditTeam team={team} roles={roles} onSaved={loaded.reload} />
                {!isOwnerTeam(team) && <DeleteTeam org={org} team={team} />}
              </>
            )
          }
        </Show>
      )}
    </>
  );
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
        <dd>{nameList(roleIdsOf(team), namesById(roles))}</dd>
      </dl>
    </Section>
  );
}

function TeamMembers({ team }: { team: Team }) {
  const teamid = team.id;
  const members = useLoad(() => allPages((page, limit) => api.GET('/teams/{teamid}/members', { params: { path: { teamid }, query: { page, limit } } })), [teamid]);
  const action = useAction();
  const add = useAction();
  const owner = isOwnerTeam(team);
  const remove = (u: User) =>
    action.run(async () => {
      await ok(api.DELETE('/teams/{teamid}/members/{username}', { params: { path: { teamid, username: u.login } } }));
      members.reload();
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
              {
                header: 'Actions',
                cell: (u) => (
                  <button type="button" className="danger" disabled={action.busy} onClick={() => void remove(u)}>
                    Remove {u.login}
                  </button>
                ),
              },
            ]}
          />
        )}
      </Show>
      <Outcome action={action} />
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
          await ok(
            api.PUT('/teams/{teamid}/members/{username}', {
              params: { path: { teamid, username }, query: connect ? { autoConnectClusters: 'true' } : {} },
            }),
          );
          members.reload();
          return `Added ${username} to ${team.name}.`;
        }}
      >
        <Field label="Username" name="username" required autoComplete="off" />
        {owner && (
          <label>
            <input type="checkbox" name="autoConnectClusters" value="true" /> Connect to the organization's clusters (cluster-admin)
          </label>
        )}
      </Form>
    </Section>
  );
}

function EditTeam({ team, roles, onSaved }: { team: Team; roles: Role[]; onSaved: () => void }) {
  const action = useAction();
  return (
    <Section title="Edit team">
      <Form
        action={action}
        label={`Edit team ${team.name}`}
        submitLabel="Save team"
        validate={(data) => teamProblem(data, team)}
        submit={async (data) => {
          const saved = await ok(api.PATCH('/teams/{teamid}', { params: { path: { teamid: team.id } }, body: teamBody(data, team) }));
          onSaved();
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
            await ok(api.DELETE('/teams/{teamid}', { params: { path: { teamid: team.id } } }));
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
