import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Form, Outcome, Section, Select, Show, Table, useAction, type Column } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { useUser } from '../../session';
import {
  fetchMemberPage,
  MEMBER_PAGE_SIZE,
  orgKeys,
  useAddTeamMember,
  useOrg,
  useOrgAllowed,
  useRemoveMember,
  useSetMemberVisibility,
  useTeams,
} from './api';
import { VISIBILITIES } from './org-list';
import { isOwnerTeam, useOrgName, type User } from './org-data';
import { loginProblem, text } from './names';
import { Pager } from './paging';
import { UserPicker } from './user-picker';

/** `/orgs/:org`: the organization, its members (public or concealed), and adding one to a team. */
export function Members() {
  const org = useOrgName();
  const about = useOrg(org);
  return (
    <>
      <OrgNav org={org} />
      <Show loaded={about}>
        {(o) => (
          <p className="muted">
            {[o.full_name, VISIBILITIES.find(([v]) => v === (o.visibility || 'public'))?.[1], o.description, o.location].filter(Boolean).join(' · ')}
            {/^https?:\/\//.test(o.website) && (
              <>
                {' · '}
                <a href={o.website} rel="noopener noreferrer">
                  {o.website}
                </a>
              </>
            )}
          </p>
        )}
      </Show>
      <MemberList org={org} />
    </>
  );
}

function MemberList({ org }: { org: string }) {
  const [page, setPage] = useState(1);
  const members = useQuery({ queryKey: orgKeys.memberPage(org, page), queryFn: () => fetchMemberPage(org, page) });
  const can = useOrgAllowed(org);
  return (
    <>
      <Section title="Members">
        <Show loaded={members}>
          {({ items, total, publicIds }) => (
            <>
              <MemberTable org={org} members={items} total={total} publicIds={publicIds} can={can} />
              <Pager label="Members" page={page} limit={MEMBER_PAGE_SIZE} total={total} onPage={setPage} />
            </>
          )}
        </Show>
      </Section>
      {/* Adding is joining a team: offered to whoever may add members to teams. */}
      {can('add_team_member') && <AddMember org={org} ownersToo={can('manage_owners')} />}
    </>
  );
}

function MemberTable({
  org: orgname,
  members,
  total,
  publicIds,
  can,
}: {
  org: string;
  members: User[];
  total: number;
  publicIds: Set<number>;
  can: (relation: string) => boolean;
}) {
  const me = useUser();
  const action = useAction();
  const visibility = useSetMemberVisibility(orgname, me.id);
  const removal = useRemoveMember(orgname);
  const publicize = (u: User, makePublic: boolean) =>
    action.run(async () => {
      await visibility.mutateAsync({ user: u, makePublic });
      return `${u.login}'s membership is now ${makePublic ? 'public' : 'concealed'}.`;
    });
  const remove = (u: User) =>
    action.run(async () => {
      await removal.mutateAsync(u.login);
      return `Removed ${u.login} from every team of ${orgname}.`;
    });
  // A member sets their own visibility; another's takes `admin` on the organization, and removing one `manage_owners`.
  const mayPublicize = (u: User) => (u.id === me.id ? can('member') : can('admin'));
  const mayRemove = can('manage_owners');
  const columns: Column<User>[] = [
    { header: 'Login', cell: (u) => (u.id === me.id ? `${u.login} (you)` : u.login) },
    { header: 'Full name', cell: (u) => u.full_name || '—' },
    { header: 'Email', cell: (u) => u.email || '—' },
    { header: 'Membership', cell: (u) => (publicIds.has(u.id) ? 'Public' : 'Concealed') },
    {
      header: 'Actions',
      cell: (u) => {
        const isPublic = publicIds.has(u.id);
        if (!mayPublicize(u) && !mayRemove) return '—';
        return (
          <>
            {mayPublicize(u) && (
              <button type="button" disabled={action.busy} onClick={() => void publicize(u, !isPublic)}>
                {isPublic ? `Conceal ${u.login}` : `Publicize ${u.login}`}
              </button>
            )}{' '}
            {mayRemove && (
              <button type="button" className="danger" disabled={action.busy} onClick={() => void remove(u)}>
                Remove {u.login}
              </button>
            )}
          </>
        );
      },
    },
  ];
  return (
    <>
      <Table
        caption={`Members of ${orgname} (${total})`}
        rows={members}
        rowKey={(u) => u.id}
        pageSize={MEMBER_PAGE_SIZE}
        columns={columns}
      />
      <Outcome action={action} />
    </>
  );
}

/** Membership follows teams: a user becomes a member by joining one of the organization's teams. */
function AddMember({ org, ownersToo }: { org: string; ownersToo: boolean }) {
  const action = useAction();
  const teams = useTeams(org);
  const adding = useAddTeamMember(org);
  return (
    <Section title="Add a member">
      <p className="muted">A user becomes a member by being added to a team; the owner team makes them an owner.</p>
      <Show loaded={teams} part="the teams a member is added to">
        {(all) => {
          // Only owners add owners: the owner team is offered to those who may manage them.
          const list = all.filter((t) => ownersToo || !isOwnerTeam(t));
          return (
            <Form
              action={action}
              label="Add a member"
              submitLabel="Add member"
              validate={(data) => loginProblem('Username', text(data, 'username')) ?? (text(data, 'team') ? undefined : 'Team is required')}
              submit={async (data) => {
                const username = text(data, 'username');
                const teamid = Number(text(data, 'team'));
                await adding.mutateAsync({ teamid, username });
                return `Added ${username} to ${list.find((t) => t.id === teamid)?.name ?? 'the team'}.`;
              }}
            >
              <UserPicker label="Username" name="username" hint="Type part of a login or full name, then pick the user" />
              <Select
                label="Team"
                name="team"
                options={list.map((t) => [String(t.id), isOwnerTeam(t) ? `${t.name} (owners)` : t.name])}
                defaultValue={String((list.find((t) => !isOwnerTeam(t)) ?? list[0])?.id ?? '')}
              />
            </Form>
          );
        }}
      </Show>
    </Section>
  );
}
