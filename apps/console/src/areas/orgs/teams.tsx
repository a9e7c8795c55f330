import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { Form, joined, Section, Show, Table, useAction } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { fetchTeamMemberCount, orgKeys, useCreateTeam, useOrgAllowed, useRoles, useTeams } from './api';
import { orgPath } from './org-list';
import { nameList, namesById, roleIdsOf, useOrgName, type Role, type Team } from './org-data';
import { TeamFields, teamBody, teamProblem } from './team-form';

export function teamPath(org: string, teamid: number): string {
  return `${orgPath(org)}/teams/${teamid}`;
}

/** `/orgs/:org/teams`: the teams with their permission, custom roles and member counts; creating one. */
export function Teams() {
  const org = useOrgName();
  const loaded = joined({ teams: useTeams(org), roles: useRoles(org) });
  const can = useOrgAllowed(org);
  return (
    <>
      <OrgNav org={org} />
      <Show loaded={loaded}>
        {({ teams, roles }) => (
          <>
            <Section title="Teams">
              <TeamTable org={org} teams={teams} roles={roles} />
            </Section>
            {can('create_team') && <CreateTeam org={org} roles={roles} />}
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
        { header: 'Members', cell: (t) => <MemberCount org={org} teamid={t.id} />, sortable: false },
      ]}
    />
  );
}

/** A team's member count: one member asked for, the count on all pages read from `X-Total-Count`. */
function MemberCount({ org, teamid }: { org: string; teamid: number }) {
  const count = useQuery({ queryKey: orgKeys.teamMemberCount(org, teamid), queryFn: () => fetchTeamMemberCount(teamid) });
  if (count.error) return <span className="muted">?</span>;
  return <span className="num">{count.data ?? '…'}</span>;
}

function CreateTeam({ org, roles }: { org: string; roles: Role[] }) {
  const action = useAction();
  const creation = useCreateTeam(org);
  return (
    <Section title="Create team">
      <Form
        action={action}
        label="Create team"
        submitLabel="Create team"
        validate={(data) => teamProblem(data, roles)}
        submit={async (data) => {
          const team = await creation.mutateAsync(teamBody(data));
          return `Created team ${team.name}.`;
        }}
      >
        <TeamFields roles={roles} />
      </Form>
    </Section>
  );
}
