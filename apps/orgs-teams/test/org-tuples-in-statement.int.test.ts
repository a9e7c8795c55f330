import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ORGS_CHANGED, TUPLES_CHANGED, type OrgsChanged, type TuplesChanged } from '@platform/bus';
import { createTestDatabase } from '@platform/testing';
import type { AuthzStub } from './authz-stub';
import { orgRequest, startOrgsTeams, type OrgsTeamsUnderTest } from './orgs-teams-under-test';

// When authz keeps its tuples in the platform's database (its table is there, no OpenFGA), an organization's creation
// writes its tuples in the statement that writes its rows and announces them itself: no call to authz, nothing left
// for after the commit (decision D134).

describe('an organization created with its tuples in its own statement', () => {
  let under: OrgsTeamsUnderTest;
  let authz: AuthzStub;
  let app: OrgsTeamsUnderTest['app'];
  let database: { url: string; drop(): Promise<void> };
  let orgs: OrgsTeamsUnderTest['orgs'];
  let alice: number;
  let bob: number;
  const sql = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    // authz's table as its migrations make it (the columns a writer fills, and its key), here before orgs-teams starts.
    await sql(
      'create schema authz; create table authz.tuples (object_type text not null, object_id text not null, relation text not null,' +
        " user_type text not null, user_id text not null, user_relation text not null default '', condition_name text not null default ''," +
        ' primary key (object_type, object_id, relation, user_type, user_relation, user_id));' +
        // What authz's embedded engine writes there first (the site admin's): authz keeps its tuples in this database.
        " insert into authz.tuples values ('site', 'platform', 'admin', 'user', '0', '', '')",
    );
    under = await startOrgsTeams({ users: ['alice', 'bob'], env: { DATABASE_URL: database.url } });
    ({ authz, app, orgs } = under);
    ({ alice, bob } = under.ids);
  });
  afterAll(async () => {
    await under?.stop();
    await database?.drop();
  });

  const newOrg = (username: string) => orgs.createOrg(orgRequest(alice, username));

  it('writes exactly the tuples of the contract with the rows, asks authz nothing, and names them in a tuples notice', async () => {
    const bus = app.running.ctx.bus!;
    const heard: TuplesChanged[] = [];
    await bus.listen(TUPLES_CHANGED, (_subject, notice) => heard.push(notice as TuplesChanged));
    const writesBefore = authz.state.writes;

    const org = await newOrg('acme');
    const owners = (await orgs.listTeams({ orgId: org.id })).teams[0];
    const rows = await sql<{ t: string }>(
      "select user_type || ':' || user_id || case when user_relation = '' then '' else '#' || user_relation end || ' ' || relation || ' ' ||" +
        " object_type || ':' || object_id as t from authz.tuples where (object_type, object_id) in (('organization', $1), ('team', $2)) order by 1",
      [String(org.id), String(owners.id)],
    );
    expect(rows.map((r) => r.t)).toEqual(
      [
        `site:platform site organization:${org.id}`,
        `organization:${org.id} organization team:${owners.id}`,
        `team:${owners.id}#member member organization:${org.id}`,
        `team:${owners.id}#member owner organization:${org.id}`,
        `user:${alice} member team:${owners.id}`,
      ].sort(),
    );
    expect(authz.state.writes).toBe(writesBefore);
    expect(await sql('select * from identity.outbox')).toEqual([]);

    // Announced before the answer: the next fence has it.
    expect(await bus.caughtUp()).toBe(true);
    const notice = heard.find((n) => n.orgs?.includes(org.id));
    expect(notice).toMatchObject({ relations: true, orgs: [org.id] });
    expect(notice?.tags).toEqual(
      expect.arrayContaining([`organization:${org.id}`, `organization:${org.id}#owner`, `team:${owners.id}`, `@user:${alice}`]),
    );
  });

  /** The tuples of authz's table on these objects, as `user relation object`, in order. */
  const tuplesOn = async (...objects: [string, number][]) =>
    (
      await sql<{ t: string }>(
        "select user_type || ':' || user_id || case when user_relation = '' then '' else '#' || user_relation end || ' ' || relation || ' ' ||" +
          " object_type || ':' || object_id as t from authz.tuples where (object_type, object_id) in (select * from unnest($1::text[], $2::text[])) order by 1",
        [objects.map(([type]) => type), objects.map(([, id]) => String(id))],
      )
    ).map((r) => r.t);

  it('writes a new team’s tuples and a new member’s with their rows, asks authz nothing, and names them in tuples notices', async () => {
    const bus = app.running.ctx.bus!;
    const heard: TuplesChanged[] = [];
    await bus.listen(TUPLES_CHANGED, (_subject, notice) => heard.push(notice as TuplesChanged));
    const org = await orgs.getOrg({ name: 'acme', viewerId: alice });
    const writesBefore = authz.state.writes;

    const team = await orgs.createTeam({ orgId: org.id, name: 'devs', description: '', permission: 'read', type: 'general' });
    expect(await tuplesOn(['team', team.id])).toEqual([`organization:${org.id} organization team:${team.id}`]);
    expect(await tuplesOn(['organization', org.id])).toContain(`team:${team.id}#member member organization:${org.id}`);
    await orgs.addTeamMember({ teamId: team.id, userId: bob, username: '', conflictIfMember: true });
    expect(await tuplesOn(['team', team.id])).toEqual(
      [`organization:${org.id} organization team:${team.id}`, `user:${bob} member team:${team.id}`].sort(),
    );
    expect(authz.state.writes).toBe(writesBefore);
    expect(await sql('select * from identity.outbox')).toEqual([]);
    expect(await bus.caughtUp()).toBe(true);
    expect(heard.flatMap((n) => n.tags ?? [])).toEqual(
      expect.arrayContaining([`team:${team.id}`, `team:${team.id}#member`, `@user:${bob}`]),
    );

    // A member again: 409, and nothing written.
    await expect(orgs.addTeamMember({ teamId: team.id, userId: bob, username: '', conflictIfMember: true })).rejects.toMatchObject({
      kind: 'conflict',
    });
    expect(await tuplesOn(['team', team.id])).toHaveLength(2);
  });

  it('adds a member in one statement that looks the team and the user up itself; refused, it writes nothing', async () => {
    const bus = app.running.ctx.bus!;
    const heard: OrgsChanged[] = [];
    await bus.listen(ORGS_CHANGED, (_subject, notice) => heard.push(notice as OrgsChanged));
    const org = await newOrg('hooli');
    const team = await orgs.createTeam({ orgId: org.id, name: 'devs', description: '', permission: 'read', type: 'general' });
    const statements: string[] = [];
    const count = (q: { sql: string }) => statements.push(q.sql);
    const knex = app.running.ctx.db!.knex;
    knex.on('query', count);
    try {
      const joined = auditOf('orgAddTeamMember', 204);
      expect(await orgs.addTeamMember({ teamId: team.id, userId: 0, username: 'Bob', conflictIfMember: true, audit: joined })).toEqual({
        added: true,
        auditRecorded: true,
      });
      expect(statements).toHaveLength(1);
    } finally {
      knex.removeListener('query', count);
    }
    expect(await tuplesOn(['team', team.id])).toContain(`user:${bob} member team:${team.id}`);
    expect(await bus.caughtUp()).toBe(true);
    expect(heard.some((n) => n.orgIds.includes(org.id))).toBe(true);

    // Refused: nobody (404), an organization (400), an unknown team (404), a member again (409). Nothing is written.
    const rows = async () => [
      await sql('select count(*)::int as n from identity.team_users'),
      await sql('select count(*)::int as n from identity.org_users'),
      await sql('select count(*)::int as n from authz.tuples'),
      await sql('select count(*)::int as n from identity.audit_events'),
    ];
    const before = await rows();
    const add = (teamId: number, user: { userId?: number; username?: string }) =>
      orgs.addTeamMember({
        teamId,
        userId: user.userId ?? 0,
        username: user.username ?? '',
        conflictIfMember: true,
        audit: auditOf('orgAddTeamMember', 204),
      });
    await expect(add(team.id, { username: 'nobody' })).rejects.toMatchObject({ kind: 'not-found', message: 'user nobody does not exist' });
    await expect(add(team.id, { userId: 987654 })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(add(team.id, { username: 'hooli' })).rejects.toMatchObject({ kind: 'input', message: 'hooli is an organization, not a user' });
    await expect(add(987654, { userId: bob })).rejects.toMatchObject({ kind: 'not-found', message: 'team 987654 does not exist' });
    await expect(add(team.id, { userId: bob })).rejects.toMatchObject({ kind: 'conflict', message: `bob is already a member of team devs` });
    expect(await rows()).toEqual(before);
  });

  it('writes neither rows nor tuples when the name is taken', async () => {
    const before = await sql('select count(*)::int as n from authz.tuples');
    await expect(newOrg('acme')).rejects.toMatchObject({ kind: 'conflict' });
    expect(await sql('select count(*)::int as n from authz.tuples')).toEqual(before);
  });

  /** A caller's audit event of a change, as the gateway makes it. */
  const auditOf = (action: string, status: number) => ({
    id: randomUUID(),
    timeUnixMs: Date.now(),
    actorId: alice,
    actorLogin: 'alice',
    action,
    method: 'POST',
    route: '/orgs',
    target: '/orgs',
    org: '',
    status,
    requestId: randomUUID(),
    client: '127.0.0.1',
  });
  const auditRows = (id: string) =>
    sql<{ action: string; status: number }>('select action, status from identity.audit_events where id = $1', [id]);

  it('writes the caller’s audit event with the change, and answers that it did; nothing of it when the change is refused', async () => {
    const created = auditOf('orgCreate', 201);
    const org = await orgs.createOrg({ ...orgRequest(alice, 'globex'), audit: created });
    expect(org.auditRecorded).toBe(true);
    expect(await auditRows(created.id)).toEqual([{ action: 'orgCreate', status: 201 }]);

    const edited = auditOf('orgEdit', 200);
    expect(await orgs.editOrg({ orgId: org.id, description: 'widgets', audit: edited })).toMatchObject({
      description: 'widgets',
      auditRecorded: true,
    });
    expect(await auditRows(edited.id)).toEqual([{ action: 'orgEdit', status: 200 }]);

    const teamMade = auditOf('orgCreateTeam', 201);
    const team = await orgs.createTeam({
      orgId: org.id,
      name: 'ops',
      description: '',
      permission: 'read',
      type: 'general',
      audit: teamMade,
    });
    expect(team.auditRecorded).toBe(true);
    expect(await auditRows(teamMade.id)).toHaveLength(1);

    const joined = auditOf('orgAddTeamMember', 204);
    expect(await orgs.addTeamMember({ teamId: team.id, userId: bob, username: '', conflictIfMember: false, audit: joined })).toEqual({
      added: true,
      auditRecorded: true,
    });
    expect(await auditRows(joined.id)).toHaveLength(1);
    // A member already: nothing written, so the caller records its event itself.
    const again = auditOf('orgAddTeamMember', 204);
    expect(await orgs.addTeamMember({ teamId: team.id, userId: bob, username: '', conflictIfMember: false, audit: again })).toEqual({
      added: false,
    });
    expect(await auditRows(again.id)).toEqual([]);

    // Refused changes write no event: a taken name, an unknown organization.
    const taken = auditOf('orgCreate', 201);
    await expect(orgs.createOrg({ ...orgRequest(alice, 'globex'), audit: taken })).rejects.toMatchObject({ kind: 'conflict' });
    const unknown = auditOf('orgEdit', 200);
    await expect(orgs.editOrg({ orgId: 987654, description: 'x', audit: unknown })).rejects.toMatchObject({ kind: 'not-found' });
    expect([...(await auditRows(taken.id)), ...(await auditRows(unknown.id))]).toEqual([]);
    // An event that is not one (no UUID) refuses the change: nothing of either is written.
    await expect(
      orgs.createOrg({ ...orgRequest(alice, 'initech'), audit: { ...auditOf('orgCreate', 201), id: 'x' } }),
    ).rejects.toMatchObject({
      kind: 'input',
    });
    await expect(orgs.getOrg({ name: 'initech', viewerId: alice })).rejects.toMatchObject({ kind: 'not-found' });
  });
});
