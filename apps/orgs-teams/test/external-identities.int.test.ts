import knexFactory, { type Knex } from 'knex';
import { notificationsV1, orgsTeamsV1 } from '@platform/proto';
import { bindService, createClient, createLogger, startGrpcServer, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

// Who single sign-on may sign in to which account, and how a sign-up's address becomes verified: the rules of
// docs/authentication.md, against orgs-teams with a stand-in contracts-licensing that records the mails it is handed.

const ISSUER = 'https://idp.example';

describe('provider links and verified addresses', () => {
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
    });
    sql = knexFactory({ client: 'pg', connection: app.databaseUrl });
    identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
    await sql('identity.site_settings').where({ id: 1 }).update({ disable_registration: false });
  });
  afterAll(async () => {
    identity?.close();
    await sql?.destroy();
    await app?.stop();
    await mailServer?.shutdown(100);
    await authz?.server.shutdown(100);
  });

  const signIn = (subject: string, email: string, emailVerified: boolean, username = subject) =>
    identity.signInExternal({
      issuer: ISSUER,
      subject,
      username,
      email,
      emailVerified,
      fullName: '',
      groups: [],
      userAgent: 'test',
      address: '127.0.0.1',
    });
  const makeUser = (username: string, email: string) =>
    identity.createUser({ username, email, password: 'a-good-password', fullName: '', mustChangePassword: false, isAdmin: false });
  const links = async (login: string) =>
    (await sql('identity.external_identities as x')
      .join('identity.accounts as a', 'a.id', 'x.uid')
      .where('a.login', login)
      .pluck('x.subject')) as string[];
  // A mail goes through the outbox (its relay every 200 ms, backing off after a failed attempt): on a busy machine it may
  // take a while, and the test's own bound is what fails a mail that never comes.
  const MAIL_WAIT_MS = 60_000;
  const mailTo = (to: string) =>
    eventually(async () => mails.some((m) => m.to === to), MAIL_WAIT_MS).then(() => mails.filter((m) => m.to === to).at(-1)!);
  const tokenOf = (mail: notificationsV1.SendMailRequest) => new URL(/https:\/\/\S+/.exec(mail.text)![0]).searchParams.get('code')!;

  it('makes no account and links none for an e-mail the provider has not verified', async () => {
    await expect(signIn('mallory-bob', 'bob@corp.example', false)).rejects.toThrow(
      /has not verified your e-mail address bob@corp\.example/,
    );
    expect(await sql('identity.accounts').where({ lower_email: 'bob@corp.example' }).first()).toBeUndefined();
    const bob = await makeUser('bob', 'bob2@corp.example');
    await expect(signIn('mallory-bob2', 'bob2@corp.example', false)).rejects.toThrow(/has not verified/);
    expect(await links('bob')).toEqual([]);
    // The real owner, vouched for by the provider, is linked to the account whose address is verified.
    const real = await signIn('real-bob', 'bob2@corp.example', true);
    expect(real.matchedBy).toBe('email');
    expect(real.session!.user!.id).toBe(bob.id);
    expect(await links('bob')).toEqual(['real-bob']);
  });

  it('refuses a second subject claiming the e-mail of an account already linked at that provider', async () => {
    await makeUser('erin', 'erin@corp.example');
    expect((await signIn('erin-1', 'erin@corp.example', true)).matchedBy).toBe('email');
    await expect(signIn('erin-2', 'erin@corp.example', true)).rejects.toThrow(/linked to another account at this identity provider/);
    expect(await links('erin')).toEqual(['erin-1']);
    expect((await signIn('erin-1', 'erin@corp.example', true)).matchedBy).toBe('linked');
  });

  it('does not link a provider person to a sign-up whose address nobody verified, until the mailed link is followed', async () => {
    const made = await identity.signUp({
      username: 'carol',
      email: 'carol@corp.example',
      password: 'attacker-password',
      fullName: '',
      userAgent: 't',
      address: '10.0.0.1',
    });
    expect(made.user!.emailVerified).toBe(false);
    await expect(signIn('real-carol', 'carol@corp.example', true)).rejects.toThrow(/its own address has not been verified/);
    expect(await links('carol')).toEqual([]);

    const mail = await mailTo('carol@corp.example');
    expect(mail.subject).toBe('Verify your e-mail address');
    expect(mail.text).toContain('https://platform.example/api/v1/user/email-verification?code=');
    // Only the token's hash is kept; the outbox holds no token in the clear either.
    const token = tokenOf(mail);
    expect(JSON.stringify(await sql('identity.email_verifications').select())).not.toContain(token);
    expect(JSON.stringify(await sql('identity.outbox').select())).not.toContain(token);

    const verified = await identity.verifyEmail({ token });
    expect(verified).toMatchObject({ login: 'carol', emailVerified: true });
    await expect(identity.verifyEmail({ token })).rejects.toThrow(/not valid any more/);
    expect((await signIn('real-carol', 'carol@corp.example', true)).matchedBy).toBe('email');
  });

  it('replaces the old link with a new mail, at most once a minute, and refuses a link for an address changed since', async () => {
    await identity.signUp({
      username: 'dave',
      email: 'dave@corp.example',
      password: 'a-good-password',
      fullName: '',
      userAgent: 't',
      address: '10.0.0.2',
    });
    const first = tokenOf(await mailTo('dave@corp.example'));
    const dave = await identity.getUser({ id: 0, login: 'dave' });
    await expect(identity.sendVerificationMail({ userId: dave.id, login: '' })).rejects.toThrow(/sent a moment ago; try again in \d+ s/);
    await sql('identity.email_verifications')
      .where({ uid: dave.id })
      .update({ created_at: new Date(Date.now() - 120_000) });
    await identity.sendVerificationMail({ userId: dave.id, login: '' });
    await eventually(async () => mails.filter((m) => m.to === 'dave@corp.example').length === 2, MAIL_WAIT_MS);
    const second = tokenOf(await mailTo('dave@corp.example'));
    await expect(identity.verifyEmail({ token: first })).rejects.toThrow(/not valid any more/);
    // Anonymous resends answer the same for unknown logins.
    await identity.sendVerificationMail({ userId: 0, login: 'nobody-here' });
    await sql('identity.accounts').where({ id: dave.id }).update({ email: 'dave@else.example', lower_email: 'dave@else.example' });
    await expect(identity.verifyEmail({ token: second })).rejects.toThrow(/not valid any more/);
    expect((await identity.getUser({ id: dave.id, login: '' })).emailVerified).toBe(false);
  });

  it("links explicitly for the account's owner, once per provider, and unlinks", async () => {
    const frank = await makeUser('frank', 'frank@corp.example');
    const gina = await makeUser('gina', 'gina@corp.example');
    expect(await identity.linkExternalIdentity({ userId: frank.id, issuer: ISSUER, subject: 'frank-at-idp' })).toMatchObject({
      issuer: ISSUER,
      subject: 'frank-at-idp',
    });
    // The same again changes nothing; another account cannot take the subject; frank cannot add a second subject.
    await identity.linkExternalIdentity({ userId: frank.id, issuer: ISSUER, subject: 'frank-at-idp' });
    await expect(identity.linkExternalIdentity({ userId: gina.id, issuer: ISSUER, subject: 'frank-at-idp' })).rejects.toThrow(
      /already linked to another platform account/,
    );
    await expect(identity.linkExternalIdentity({ userId: frank.id, issuer: ISSUER, subject: 'other' })).rejects.toThrow(/unlink it first/);
    expect((await signIn('frank-at-idp', 'whatever@else.example', false)).session!.user!.login).toBe('frank');
    expect((await identity.listExternalIdentities({ userId: frank.id })).identities.map((x) => x.subject)).toEqual(['frank-at-idp']);
    await identity.unlinkExternalIdentity({ userId: frank.id, issuer: ISSUER });
    await expect(identity.unlinkExternalIdentity({ userId: frank.id, issuer: ISSUER })).rejects.toThrow(/not linked/);
    await expect(signIn('frank-at-idp', 'whatever@else.example', false)).rejects.toThrow(/has not verified/);
  });

  it('refuses the password sign-in of an unverified address while the site lists allowed domains', async () => {
    await identity.signUp({
      username: 'hana',
      email: 'hana@corp.example',
      password: 'a-good-password',
      fullName: '',
      userAgent: 't',
      address: '10.0.0.3',
    });
    expect((await identity.authenticateBasic({ username: 'hana', password: 'a-good-password', otp: '' })).user!.login).toBe('hana');
    await sql('identity.allowed_domains').insert({ name: 'corp.example' });
    try {
      await expect(identity.authenticateBasic({ username: 'hana', password: 'a-good-password', otp: '' })).rejects.toThrow(
        /your e-mail address hana@corp\.example is not verified yet/,
      );
      // A sign-up there starts no session until the address is verified.
      const made = await identity.signUp({
        username: 'ivan',
        email: 'ivan@corp.example',
        password: 'a-good-password',
        fullName: '',
        userAgent: 't',
        address: '10.0.0.4',
      });
      expect(made.session).toBeUndefined();
      await identity.verifyEmail({ token: tokenOf(await mailTo('hana@corp.example')) });
      expect((await identity.authenticateBasic({ username: 'hana', password: 'a-good-password', otp: '' })).user!.emailVerified).toBe(true);
    } finally {
      await sql('identity.allowed_domains').del();
    }
  });
});
