import knexFactory, { type Knex } from 'knex';
import { orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

// Console sessions in orgs-teams (docs/authentication.md, "Console sessions"): the secret answered once, a session
// found by it, listed, ended by its user; every other session ended by a password change, all of them by an admin's
// new password or deactivation (for good); idle and absolute ends, moved into the past in the table rather than
// waited for. The cookie, CSRF and the rows over HTTP: apps/gateway/test/sessions.test.ts.

const IDLE_SECONDS = 60;
const MAX_SECONDS = 3600;

describe('console sessions', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let sql: Knex;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      SESSION_IDLE_TIMEOUT: `${IDLE_SECONDS}s`,
      SESSION_MAX_LIFETIME: String(MAX_SECONDS),
    });
    sql = knexFactory({ client: 'pg', connection: app.databaseUrl });
    identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
  });
  afterAll(async () => {
    identity?.close();
    await sql?.destroy();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  const makeUser = (username: string) =>
    identity.createUser({
      username,
      email: `${username}@example.com`,
      password: `${username}-password`,
      fullName: '',
      mustChangePassword: false,
      isAdmin: false,
    });
  const start = (userId: number) => identity.createSession({ userId, userAgent: 'SessionsTest/1.0', address: '10.0.0.7' });
  const whoIs = (secret: string) => identity.authenticateSession({ secret });
  const refusal = (secret: string) =>
    whoIs(secret).then(
      () => 'accepted',
      (err: { kind: string; message: string }) => `${err.kind}: ${err.message}`,
    );

  it('starts a session whose secret is answered once and found again, with its client and both ends', async () => {
    const alice = await makeUser('alice');
    const before = Math.floor(Date.now() / 1000);
    const created = await start(alice.id);
    expect(created.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created.user).toMatchObject({ id: alice.id, login: 'alice' });
    expect(created.session).toMatchObject({ userAgent: 'SessionsTest/1.0', address: '10.0.0.7' });
    expect(created.session!.expiresUnix - before).toBeGreaterThanOrEqual(IDLE_SECONDS - 1);
    expect(created.session!.maxExpiresUnix - before).toBeGreaterThanOrEqual(MAX_SECONDS - 1);
    // Only its SHA-256 is kept.
    expect(JSON.stringify(await sql('identity.sessions').select())).not.toContain(created.secret);

    expect(await whoIs(created.secret)).toMatchObject({ user: { login: 'alice' }, session: { id: created.session!.id } });
    expect((await identity.listSessions({ userId: alice.id })).sessions.map((s) => s.id)).toEqual([created.session!.id]);
    expect(await refusal('x'.repeat(43))).toBe('unauthenticated: invalid session');
  });

  it('ends one of its own sessions on the next request, and finds no other user’s (404)', async () => {
    const carol = await makeUser('carol');
    const bob = await makeUser('bob');
    const first = await start(carol.id);
    const second = await start(carol.id);
    const bobs = await start(bob.id);
    expect((await identity.listSessions({ userId: carol.id })).sessions.map((s) => s.id).sort((a, b) => a - b)).toEqual([
      first.session!.id,
      second.session!.id,
    ]);
    await identity.deleteSession({ userId: carol.id, id: first.session!.id });
    expect(await refusal(first.secret)).toBe('unauthenticated: invalid session');
    expect(await refusal(second.secret)).toBe('accepted');
    await expect(identity.deleteSession({ userId: carol.id, id: first.session!.id })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(identity.deleteSession({ userId: carol.id, id: bobs.session!.id })).rejects.toMatchObject({ kind: 'not-found' });
    expect(await refusal(bobs.secret)).toBe('accepted');
  });

  it('ends every other session with a password change, and all of them with an admin’s new password', async () => {
    const frank = await makeUser('frank');
    const here = await start(frank.id);
    const elsewhere = await start(frank.id);
    await identity.changePassword({
      userId: frank.id,
      oldPassword: 'frank-password',
      newPassword: 'frank-new-password',
      keepSessionId: here.session!.id,
    });
    expect(await refusal(here.secret)).toBe('accepted');
    expect(await refusal(elsewhere.secret)).toBe('unauthenticated: invalid session');

    const again = await start(frank.id);
    await identity.editUser(orgsTeamsV1.EditUserRequest.fromPartial({ login: 'frank', password: 'frank-third-password' }));
    for (const s of [here, again]) expect(await refusal(s.secret)).toBe('unauthenticated: invalid session');
  });

  it('ends the sessions of a user made inactive, for good', async () => {
    const dave = await makeUser('dave');
    const session = await start(dave.id);
    await identity.editUser(orgsTeamsV1.EditUserRequest.fromPartial({ login: 'dave', active: false }));
    expect(await refusal(session.secret)).toMatch(/^unauthenticated: /);
    await identity.editUser(orgsTeamsV1.EditUserRequest.fromPartial({ login: 'dave', active: true }));
    expect(await refusal(session.secret)).toBe('unauthenticated: invalid session');
    expect((await identity.listSessions({ userId: dave.id })).sessions).toEqual([]);
  });

  it('ends a session left idle, and one past its lifetime however much it is used; a used one lives on', async () => {
    const erin = await makeUser('erin');
    const idle = await start(erin.id);
    const busy = await start(erin.id);
    const past = (seconds: number) => new Date(Date.now() - seconds * 1000);
    // Both last used just over the idle timeout ago... but the busy one is used now, just inside it.
    await sql('identity.sessions')
      .where({ id: idle.session!.id })
      .update({ last_used_at: past(IDLE_SECONDS + 1) });
    await sql('identity.sessions')
      .where({ id: busy.session!.id })
      .update({ last_used_at: past(IDLE_SECONDS - 5) });
    expect(await refusal(idle.secret)).toBe('unauthenticated: session expired');
    const used = await whoIs(busy.secret);
    // Its use is recorded: the idle timeout counts again from now.
    expect(used.session!.lastUsedUnix).toBeGreaterThan(Math.floor(past(5).getTime() / 1000));
    expect((await identity.listSessions({ userId: erin.id })).sessions.map((s) => s.id)).toEqual([busy.session!.id]);
    // Past its absolute end, used a moment ago or not.
    await sql('identity.sessions')
      .where({ id: busy.session!.id })
      .update({ absolute_expires_at: past(1) });
    expect(await refusal(busy.secret)).toBe('unauthenticated: session expired');
  });

  it('revokes every token and session of a user at once, keeping the account', async () => {
    const hank = await makeUser('hank');
    await identity.createToken({ userId: hank.id, name: 'one', scope: '', scopeAccountId: 0, accessScopes: [] });
    await identity.createToken({ userId: hank.id, name: 'two', scope: '', scopeAccountId: 0, accessScopes: [] });
    const session = await start(hank.id);
    expect(await identity.revokeUserCredentials({ login: 'hank' })).toMatchObject({ tokens: 2, sessions: 1 });
    expect(await refusal(session.secret)).toBe('unauthenticated: invalid session');
    expect((await identity.listTokens({ userId: hank.id })).tokens).toEqual([]);
    expect(await identity.authenticateBasic({ username: 'hank', password: 'hank-password', otp: '' })).toMatchObject({
      user: { login: 'hank' },
    });
    await expect(identity.revokeUserCredentials({ login: 'nobody-here' })).rejects.toMatchObject({ kind: 'not-found' });
  });
});
