import { randomUUID } from 'node:crypto';
import { ACCOUNTS_CHANGED, ORGS_CHANGED, type AccountsChanged, type OrgsChanged } from '@platform/bus';
import { orgsTeamsAuditV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { announcingChanges, ChangeAnnouncer, READERS_KEEP } from '../src/changes';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { orgRequest } from './orgs-teams-under-test';

// Every write of orgs-teams announces what it changed to the readers that keep its answers (docs/decisions.md, D83):
// through the real bindings, on the real bus, with statements seen on the real database.

describe("orgs-teams' writes announce themselves", () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  let audit: PromiseClient<typeof orgsTeamsAuditV1.AuditServiceService>;
  let stopListening: (() => Promise<void>)[] = [];
  const heard: string[] = [];
  let alice: number;

  /** What was heard from now until a write of our own that is announced (notices keep their order). */
  async function heardDuring(fn: () => Promise<unknown>): Promise<string[]> {
    const marker = await identity.createUser({
      username: `m${randomUUID().slice(0, 8)}`,
      email: `${randomUUID()}@example.com`,
      password: 'password1',
      fullName: '',
      mustChangePassword: false,
      isAdmin: false,
    });
    await eventually(async () => heard.includes(`accounts ${marker.id}`));
    heard.length = 0;
    await fn();
    const end = await identity.createToken({ userId: marker.id, name: 'end', scope: '', scopeAccountId: 0, accessScopes: [] });
    await eventually(async () => heard.includes(`accounts ${marker.id}`));
    expect(end.id).toBeGreaterThan(0);
    return heard.slice(0, heard.indexOf(`accounts ${marker.id}`));
  }

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      PLATFORM_ADMIN_ORG: 'none',
    });
    const bus = app.running.ctx.bus!;
    stopListening = [
      await bus.listen(ACCOUNTS_CHANGED, (_s, p) => {
        const n = p as AccountsChanged;
        heard.push(n.all ? 'accounts all' : `accounts ${n.userIds.join(',')}`);
      }),
      await bus.listen(ORGS_CHANGED, (_s, p) => {
        const n = p as OrgsChanged;
        const rows = (n.rows ?? []).map((r) => ` row ${r.id} v${r.version} ${(r as { description?: string }).description}`);
        heard.push(n.all ? 'orgs all' : `orgs ${n.orgIds.join(',')}${rows.join('')}`);
      }),
    ];
    const client = <D>(definition: D) => createClient(definition, app.address, { name: 'orgs-teams' });
    identity = client(orgsTeamsV1.OrgsTeamsServiceService);
    orgs = client(orgsTeamsOrgsV1.OrganizationsServiceService);
    audit = client(orgsTeamsAuditV1.AuditServiceService);
    alice = (
      await identity.createUser({
        username: 'alice',
        email: 'alice@example.com',
        password: 'password1',
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      })
    ).id;
  });

  afterAll(async () => {
    for (const stop of stopListening) await stop();
    for (const c of [identity, orgs, audit]) c?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it('names the account of a token deleted and the organization of a team made or an organization edited; a read says nothing', async () => {
    const token = await identity.createToken({ userId: alice, name: 'ci', scope: '', scopeAccountId: 0, accessScopes: [] });
    expect(await heardDuring(() => identity.deleteToken({ userId: alice, id: token.id }))).toEqual([`accounts ${alice}`]);
    const org = await orgs.createOrg(orgRequest(alice, 'acme'));
    expect(
      await heardDuring(() => orgs.createTeam({ orgId: org.id, name: 'ops', description: '', permission: '', type: 'general' })),
    ).toEqual([`orgs ${org.id}`]);
    // An edit's notice brings the row it left, one version more each time, for readers to replace what they keep.
    expect(org.version).toBe(0);
    expect(await heardDuring(() => orgs.editOrg({ orgId: org.id, description: 'changed' }))).toEqual([
      `orgs ${org.id} row ${org.id} v1 changed`,
    ]);
    const again = await orgs.editOrg({ orgId: org.id, description: 'again' });
    expect(again).toMatchObject({ description: 'again', version: 2 });
    expect(await orgs.getOrg({ name: 'acme', viewerId: alice })).toMatchObject({ description: 'again', version: 2 });
    expect(
      await heardDuring(async () => {
        await orgs.getOrg({ name: 'acme', viewerId: alice });
        await orgs.listTeams({ orgId: org.id });
        await identity.authenticateBasic({ username: 'alice', password: 'password1', otp: '' });
      }),
    ).toEqual([]);
  });

  it('says nothing of accounts and organizations for an audit event, nor for a write refused before it wrote', async () => {
    const event = {
      id: randomUUID(),
      timeUnixMs: Date.now(),
      actorId: alice,
      actorLogin: 'alice',
      action: 'test',
      method: 'GET',
      route: '/',
      target: '/',
      org: '',
      status: 200,
      requestId: 'r',
      client: '',
    };
    expect(await heardDuring(() => audit.recordAuditEvent(event))).toEqual([]);
    // Several at once, the one already stored among them kept once.
    const more = { ...event, id: randomUUID(), target: '/more' };
    expect(await heardDuring(() => audit.recordAuditEvents({ events: [event, more] }))).toEqual([]);
    const stored = await audit.listAuditEvents({
      actor: 'alice',
      action: 'test',
      targetPrefix: '',
      org: '',
      sinceUnixMs: 0,
      untilUnixMs: 0,
      page: 1,
      limit: 10,
    });
    expect(stored.events.map((e) => e.target).sort()).toEqual(['/', '/more']);
    // Refused before its statement (the visibility is none Gitea knows): nothing written, nothing said.
    expect(await heardDuring(() => expect(orgs.editOrg({ orgId: 999_999, visibility: 'secret' })).rejects.toThrow(/visibility/))).toEqual(
      [],
    );
  });

  it('names only the organization an edit names when there is no such organization', async () => {
    // The update itself finds none (nothing is read first); named all the same, since a statement whose answer is lost
    // may have written: a notice of an id that is no organization drops nothing anywhere.
    expect(await heardDuring(() => expect(orgs.editOrg({ orgId: 999_999, description: 'x' })).rejects.toThrow(/does not exist/))).toEqual([
      'orgs 999999',
    ]);
  });

  it('announces everything for a statement on a kept table that recorded nothing, in a transaction too', async () => {
    const { db, bus, log } = app.running.ctx;
    const announcer = new ChangeAnnouncer(db!.schema, bus, log);
    expect(
      await heardDuring(() =>
        announcingChanges(announcer, () =>
          db!.transaction((trx) => db!.table('accounts', trx).where({ id: alice }).update({ location: 'moved' })),
        ),
      ),
    ).toEqual(['accounts all', 'orgs all']);
  });

  it('knows, for every table of its schema, whether readers keep answers of it and which records cover a write of it', async () => {
    const db = app.running.ctx.db!;
    const tables: string[] = await db.knex('information_schema.tables').where({ table_schema: db.schema }).pluck('table_name');
    expect(tables.filter((t) => !(t in READERS_KEEP))).toEqual([]);
  });
});
