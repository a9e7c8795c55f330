import knexFactory, { type Knex } from 'knex';
import { notificationsV1, orgsTeamsV1 } from '@platform/proto';
import { bindService, createClient, createLogger, startGrpcServer, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

// A forgotten password's reset by a mailed link (docs/authentication.md, "Forgotten passwords"), against orgs-teams with
// a stand-in contracts-licensing that records the mails it is handed.

describe('password reset by a mailed link', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let sql: Knex;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  const mails: notificationsV1.SendMailRequest[] = [];
  let mailServer: Awaited<ReturnType<typeof startGrpcServer>>;

  beforeAll(async () => {
    authz = await startAuthzStub();
    mailServer = await startGrpcServer({
      name: 'contracts-stub',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(notificationsV1.NotificationsServiceService, {
          async sendMail(req: notificationsV1.SendMailRequest) {
            if (!mails.some((m) => m.dedupeKey === req.dedupeKey)) mails.push(req);
            return {};
          },
        } as never),
      ],
      protoFiles: ['platformadmin/contractslicensing/v1/notifications.proto'],
      log: createLogger('contracts-stub', 'silent'),
    });
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      CONTRACTS_LICENSING_GRPC_ADDR: `127.0.0.1:${mailServer.port}`,
      PUBLIC_URL: 'https://platform.example/',
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      OUTBOX_RELAY_INTERVAL_MS: '200',
      PASSWORD_RESET_MAX_PER_ADDRESS: '5',
      PASSWORD_RESET_MAX_PER_ACCOUNT: '3',
    });
    sql = knexFactory({ client: 'pg', connection: app.databaseUrl });
    identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
  });
  afterAll(async () => {
    identity?.close();
    await sql?.destroy();
    await app?.stop();
    await mailServer?.shutdown(100);
    await authz?.server.shutdown(100);
  });

  let nextAddress = 1;
  /** A client address of its own for each ask, so the limit per address is reached only where a test means it. */
  const freshAddress = () => `10.1.0.${nextAddress++}`;
  const makeUser = (username: string, mustChangePassword = false) =>
    identity.createUser({
      username,
      email: `${username}@corp.example`,
      password: `${username}-password`,
      fullName: '',
      mustChangePassword,
      isAdmin: false,
    });
  const ask = (login: string, address = freshAddress()) => identity.requestPasswordReset({ login, address });
  const mailsTo = (to: string) => mails.filter((m) => m.to === to);
  /** Waits for the `n`th mail to `to` and answers the code of its link. */
  const codeOfMail = async (to: string, n = 1) => {
    await eventually(async () => mailsTo(to).length >= n, 10_000);
    const mail = mailsTo(to)[n - 1];
    expect(mail.subject).toBe('Reset your password');
    expect(mail.text).toContain('open this link within 30 minutes (it works once)');
    const link = /https:\/\/\S+/.exec(mail.text)![0];
    expect(link).toMatch(/^https:\/\/platform\.example\/reset-password#code=/);
    return new URL(link).hash.slice('#code='.length);
  };
  const signIn = (login: string, password: string) => identity.authenticateBasic({ username: login, password, otp: '' });
  const reset = (code: string, newPassword: string, address = freshAddress()) => identity.resetPassword({ code, newPassword, address });

  it('mails a link that sets a new password once: sessions end, tokens stay, the old password and the used link are refused', async () => {
    const olga = await makeUser('olga', true);
    const session = await identity.createSession({ userId: olga.id, userAgent: 't', address: '10.0.0.1' });
    const token = await identity.createToken({ userId: olga.id, name: 'ci', scope: '', scopeAccountId: 0, accessScopes: [] });

    expect(await ask('OLGA')).toEqual({});
    const code = await codeOfMail('olga@corp.example');
    // Only the verifier's hash is kept; the outbox holds the code sealed, never in the clear.
    expect(JSON.stringify(await sql('identity.password_resets').select())).not.toContain(code.split('.')[1]);
    expect(JSON.stringify(await sql('identity.outbox').select())).not.toContain(code);

    expect(await identity.checkPasswordReset({ code, address: freshAddress() })).toMatchObject({ login: 'olga' });
    // A password too short is refused by name, and the link still works.
    await expect(reset(code, 'short')).rejects.toMatchObject({ kind: 'validation', message: 'new_password: at least 8 characters' });
    expect(await reset(code, 'olga-new-password')).toEqual({ login: 'olga', sessionsEnded: 1 });

    expect((await signIn('olga', 'olga-new-password')).user).toMatchObject({
      login: 'olga',
      mustChangePassword: false,
      emailVerified: true,
    });
    await expect(signIn('olga', 'olga-password')).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(identity.authenticateSession({ secret: session.secret })).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect((await identity.authenticate({ token: token.sha1 })).user!.login).toBe('olga');
    await expect(reset(code, 'olga-third-password')).rejects.toMatchObject({ kind: 'input', message: /not valid any more/ });
    await expect(identity.checkPasswordReset({ code, address: freshAddress() })).rejects.toMatchObject({ kind: 'input' });

    // No one was signed in to record it at the edge: the account itself is the actor in the audit trail.
    const events = await sql('identity.audit_events').where({ actor_id: olga.id, action: 'userResetPassword' }).select('target', 'client');
    expect(events).toEqual([{ target: '/user/password-reset/new-password', client: expect.stringMatching(/^10\.1\.0\.\d+$/) }]);
  });

  it('answers an unknown name, an address and an inactive user alike, and mails only the active user', async () => {
    const pia = await makeUser('pia');
    await makeUser('quinn');
    await identity.editUser({ login: 'quinn', active: false, editorId: 0 });
    for (const name of ['nobody-at-all', 'nobody@corp.example', 'quinn', 'Pia@CORP.example']) expect(await ask(name)).toEqual({});
    await codeOfMail('pia@corp.example');
    expect(await sql('identity.password_resets').pluck('uid')).not.toContain(
      Number((await identity.getUser({ id: 0, login: 'quinn' })).id),
    );
    expect(mailsTo('quinn@corp.example')).toEqual([]);
    expect(Number((await sql('identity.password_resets').where({ uid: pia.id }).first()).uid)).toBe(pia.id);
  });

  it('refuses a link once expired, replaced, or once the password or the address changed another way', async () => {
    const rita = await makeUser('rita');
    await ask('rita');
    const expired = await codeOfMail('rita@corp.example');
    await sql('identity.password_resets')
      .where({ uid: rita.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    await expect(reset(expired, 'rita-new-password')).rejects.toMatchObject({ kind: 'input', message: /not valid any more/ });
    expect(await sql('identity.password_resets').where({ uid: rita.id }).first()).toBeUndefined();

    await ask('rita');
    const replaced = await codeOfMail('rita@corp.example', 2);
    await ask('rita');
    const latest = await codeOfMail('rita@corp.example', 3);
    await expect(identity.checkPasswordReset({ code: replaced, address: freshAddress() })).rejects.toMatchObject({ kind: 'input' });
    await identity.changePassword({ userId: rita.id, oldPassword: 'rita-password', newPassword: 'rita-other-password', keepSessionId: 0 });
    await expect(reset(latest, 'rita-new-password')).rejects.toMatchObject({ kind: 'input' });
    expect((await signIn('rita', 'rita-other-password')).user!.login).toBe('rita');

    const sam = await makeUser('sam');
    await ask('sam');
    const moved = await codeOfMail('sam@corp.example');
    await sql('identity.accounts').where({ id: sam.id }).update({ email: 'sam@else.example', lower_email: 'sam@else.example' });
    await expect(reset(moved, 'sam-new-password')).rejects.toMatchObject({ kind: 'input' });
  });

  it('limits requests per name (unknown names alike) and per address, and invalid links per address, with Retry-After', async () => {
    await makeUser('tara');
    for (const name of ['tara', 'nobody-else']) {
      for (let i = 0; i < 3; i += 1) await ask(name);
      const refused = await ask(name).catch((err: unknown) => err);
      expect(refused).toMatchObject({
        kind: 'too-many-requests',
        message: /^too many password-reset requests for this account; try again in \d+ s$/,
      });
      expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(0);
    }
    // The account's mails are limited too, without a word: under its address it is another name, but the same account.
    // Whether a mail was staged is known after the answer: another user's request, asked after it, is mailed after it.
    expect(await ask('tara@corp.example')).toEqual({});
    await makeUser('uma');
    await ask('uma');
    await codeOfMail('uma@corp.example');
    expect(mailsTo('tara@corp.example')).toHaveLength(3);

    const address = freshAddress();
    for (let i = 0; i < 5; i += 1) await ask(`someone-${i}`, address);
    await expect(ask('someone-else', address)).rejects.toMatchObject({ message: /^too many password-reset requests from this address/ });

    const guesser = freshAddress();
    for (let i = 0; i < 5; i += 1)
      await expect(
        identity.checkPasswordReset({ code: `${'A'.repeat(22)}.${String(i).padEnd(43, 'B')}`, address: guesser }),
      ).rejects.toMatchObject({
        kind: 'input',
      });
    // Past the limit even a working link is refused from that address.
    const working = await codeOfMail('tara@corp.example', 3);
    expect(await identity.checkPasswordReset({ code: working, address: freshAddress() })).toMatchObject({ login: 'tara' });
    await expect(identity.checkPasswordReset({ code: working, address: guesser })).rejects.toMatchObject({ kind: 'too-many-requests' });
  });
});
