import { Link } from 'react-router';
import { api, ok } from '../../api/client';
import { Form, Section, Show, Table, useAction, useLoad } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { orgPath } from './org-list';
import { loadRoles, loadTeams, nameList, namesById, roleIdsOf, useOrgName, type Role, type Team } from './org-data';
import { pageOf } from './paging';
import { TeamFields, teamBody, teamProblem } from './team-form';

export function teamPath(org: string, teamid: number): string {
  return `${orgPath(org)}/teams/${teamid}`;
}

/** `/orgs/:org/teams`: the teams with their permission, custom roles and member counts; creating one. */
export function Teams() {
  const org = useOrgName();
  const loaded = useLoad(async () => {
    const [teams, roles] = await Promise.all([loadTeams(org), loadRoles(org)]);
    return { teams, roles };
  }, [org]);
  return (
    <>
      <OrgNav org={org} />
      <Show loaded={loaded}>
        {({ teams, roles }) => (
          <>
            <Section title="Teams">
              <TeamTable org={org} teams={teams} roles={roles} />
            </Section>
            <CreateTeam org={org} roles={roles} onCreated={loaded.reload} />
          </>
        )}
      </Show>
    </>
  );
}

function TeamTable({ org, teams, roles }: { org: string; teams: Team[]; roles: Role[] }) {
  const roleNames = namesById(roles);
  return (
    <Table
      caption={`Teams of ${org} (${teams.length})`}
      rows={teams}
      rowKey={(t) => t.id}
      columns={[
        { header: 'Name', cell: (t) => <Link to={teamPath(org, t.id)}>{t.name}</Link> },
        { header: 'Description', cell: (t) => t.description || '—' },
        { header: 'Permission', cell: (t) => t.permission },
        { header: 'Type', cell: (t) => t.type },
        { header: 'Custom roles', cell: (t) => nameList(roleIdsOf(t), roleNames) },
        { header: 'Members', cell: (t) => <MemberCount teamid={t.id} /> },
      ]}
    />
  );
}

/** A team's member count: one member asked for, the count on all pages read from `X-Total-Count`. */
function MemberCount({ teamid }: { teamid: number }) {
  const count = useLoad(() => pageOf(api.GET('/teams/{teamid}/members', { params: { path: { teamid }, query: { page: 1, limit: 1 } } })), [teamid]);
  if (count.error) return <span className="muted">?</span>;
  return <span className="num">{count.data ? count.data.total : '…'}</span>;
}

function CreateTeam({ org, roles, onCreated }: { org: string; roles: Role[]; onCreated: () => void }) {
  const action = useAction();
  return (
    <Section title="Create team">
      <Form
        action={action}
        label="Create team"
        submitLabel="Create team"
        validate={(data) => teamProblem(data)}
        submit={async (data) => {
          const team = await ok(api.POST('/orgs/{orgname}/teams', { params: { path: { orgname: org } }, body: teamBody(data) }));
          onCreated();
          return `Created team ${team.name}.`;
        }}
      >
        <TeamFields roles={roles} />
      </Form>
    </Section>
  );
}
