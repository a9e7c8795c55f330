import { useState } from 'react';
import { api, ok } from '../../api/client';
import { Field, Form, Outcome, Section, Select, Show, Table, useAction, useLoad, type Column } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { useUser } from '../../session';
import { VISIBILITIES } from './org-list';
import { isOwnerTeam, loadTeams, useOrgName, type User } from './org-data';
import { loginProblem, text } from './names';
import { allPages, Pager, pageOf } from './paging';

const PAGE_SIZE = 30;

/** `/orgs/:org`: the organization, its members (public or concealed), and adding one to a team. */
export function Members() {
  const org = useOrgName();
  const about = useLoad(() => ok(api.GET('/orgs/{orgname}', { params: { path: { orgname: org } } })), [org]);
  return (
    <>
      <OrgNav org={org} />
      <Show loaded={about}>
        {(o) => (
          <p className="muted">
            {[o.full_name, VISIBILITIES.find(([v]) => v === (o.visibility || 'public'))?.[1], o.description].filter(Boolean).join(' · ')}
          </p>
        )}
      </Show>
      <MemberList org={org} />
    </>
  );
}

function MemberList({ org }: { org: string }) {
  const [page, setPage] = useState(1);
  const members = useLoad(async () => {
    // The member list says who is a member; whether each membership is public is the public-member list.
    const [list, publicOnes] = await Promise.all([
      pageOf(api.GET('/orgs/{orgname}/members', { params: { path: { orgname: org }, query: { page, limit: PAGE_SIZE } } })),
      allPages((p, limit) => api.GET('/orgs/{orgname}/public_members', { params: { path: { orgname: org }, query: { page: p, limit } } })),
    ]);
    return { ...list, publicIds: new Set(publicOnes.map((u) => u.id)) };
  }, [org, page]);
  return (
    <>
      <Section title="Members">
        <Show loaded={members}>
          {({ items, total, publicIds }) => (
            <>
              <MemberTable org={org} members={items} total={total} publicIds={publicIds} onChange={members.reload} />
              <Pager label="Members" page={page} limit={PAGE_SIZE} total={total} onPage={setPage} />
            </>
          )}
        </Show>
      </Section>
      <AddMember org={org} onAdded={members.reload} />
    </>
  );
}

function MemberTable({ org: orgname, members, total, publicIds, onChange }: { org: string; members: User[]; total: number; publicIds: Set<number>; onChange: () => void }) {
  const me = useUser();
  const action = useAction();
  const publicize = (u: User, makePublic: boolean) =>
    action.run(async () => {
      // Members change their own visibility through public_members (the spec's route); an administrator changes
      // another member's with the member action (`admin:org`), which public_members refuses (403).
      if (u.id === me.id) {
        const path = { orgname, username: u.login };
        await ok(makePublic ? api.PUT('/orgs/{orgname}/public_members/{username}', { params: { path } }) : api.DELETE('/orgs/{orgname}/public_members/{username}', { params: { path } }));
      } else {
        const params = { path: { orgname }, query: { uid: u.id } };
        await ok(makePublic ? api.POST('/orgs/{orgname}/members/action/public', { params }) : api.POST('/orgs/{orgname}/members/action/private', { params }));
      }
      onChange();
      return `${u.login}'s membership is now ${makePublic ? 'public' : 'concealed'}.`;
    });
  const remove = (u: User) =>
    action.run(async () => {
      await ok(api.DELETE('/orgs/{orgname}/members/{username}', { params: { path: { orgname, username: u.login } } }));
      onChange();
      return `Removed ${u.login} from every team of ${orgname}.`;
    });
  const columns: Column<User>[] = [
    { header: 'Login', cell: (u) => (u.id === me.id ? `${u.login} (you)` : u.login) },
    { header: 'Full name', cell: (u) => u.full_name || '—' },
    { header: 'Email', cell: (u) => u.email || '—' },
    { header: 'Membership', cell: (u) => (publicIds.has(u.id) ? 'Public' : 'Concealed') },
    {
      header: 'Actions',
      cell: (u) => {
        const isPublic = publicIds.has(u.id);
        return (
          <>
            <button type="button" disabled={action.busy} onClick={() => void publicize(u, !isPublic)}>
              {isPublic ? `Conceal ${u.login}` : `Publicize ${u.login}`}
            </button>{' '}
            <button type="button" className="danger" disabled={action.busy} onClick={() => void remove(u)}>
              Remove {u.login}
            </button>
          </>
        );
      },
    },
  ];
  return (
    <>
      <Table caption={`Members of ${orgname} (${total})`} rows={members} rowKey={(u) => u.id} pageSize={PAGE_SIZE} columns={columns} />
      <Outcome action={action} />
    </>
  );
}

/** Membership follows teams: a user becomes a member by joining one of the organization's teams. */
function AddMember({ org, onAdded }: { org: string; onAdded: () => void }) {
  const action = useAction();
  const teams = useLoad(() => loadTeams(org), [org]);
  return (
    <Section title="Add a member">
      <p className="muted">A user becomes a member by being added to a team; the owner team makes them an owner.</p>
      <Show loaded={teams}>
        {(list) => (
          <Form
            action={action}
            label="Add a member"
            submitLabel="Add member"
            validate={(data) => loginProblem('Username', text(data, 'username')) ?? (text(data, 'team') ? undefined : 'Team is required')}
            submit={async (data) => {
              const username = text(data, 'username');
              const teamid = Number(text(data, 'team'));
              await ok(api.PUT('/teams/{teamid}/members/{username}', { params: { path: { teamid, username } } }));
              onAdded();
              return `Added ${username} to ${list.find((t) => t.id === teamid)?.name ?? 'the team'}.`;
            }}
          >
            <Field label="Username" name="username" required autoComplete="off" />
            <Select
              label="Team"
              name="team"
              options={list.map((t) => [String(t.id), isOwnerTeam(t) ? `${t.name} (owners)` : t.name])}
              defaultValue={String((list.find((t) => !isOwnerTeam(t)) ?? list[0])?.id ?? '')}
            />
          </Form>
        )}
      </Show>
    </Section>
  );
}
