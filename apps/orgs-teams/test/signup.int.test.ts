import { notificationsV1, orgsTeamsSettingsV1, orgsTeamsV1 } from '@platform/proto';
import {
  bindService,
  createClient,
  createLogger,
  startGrpcServer,
  type PromiseClient,
  type RunningGrpcServer,
} from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

// Sign-up and the site settings it honours (docs/site-settings.md, docs/authentication.md "Verified e-mail
// addresses"): the registration switch and the allowed domains read on every attempt, the validation and conflicts of
// a site admin's creation, a limit of sign-ups per client address; what a site admin makes or changes is verified by
// that act, and a verified address is not mailed again. The mailed link itself: external-identities.int.test.ts; the
// rows over HTTP: apps/gateway/test/signup.test.ts.

const MAX_SIGNUPS = 7;

describe('sign-up in orgs-teams', () => {
  let authz: AuthzStub;
  let mail: RunningGrpcServer;
  let app: AppUnderTest;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  let settings: PromiseClient<typeof orgsTeamsSettingsV1.SiteSettingsServiceService>;
  const mailed: string[] = [];
  const signUp = (username: string, email = `${username}@example.com`, password = 'signup-password', address = '192.0.2.1') =>
    identity.signUp({ username, email, password, fullName: '', userAgent: 'test', address });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => 'accepted',
      (err) => ({ status: err.httpStatus, message: err.message }),
    );
  const exists = (login: string) =>
    identity.getUser({ id: 0, login }).then(
      () => true,
      () => false,
    );

  beforeAll(async () => {
    authz = await startAuthzStub();
    // A stand-in contracts-licensing that records whom each mail is to.
    mail = await startGrpcServer({
      name: 'contracts-stub',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(notificationsV1.NotificationsServiceService, {
          async sendMail(req: notificationsV1.SendMailRequest) {
            mailed.push(req.to);
            return {};
          },
        } as never),
      ],
      protoFiles: ['platformadmin/contractslicensing/v1/notifications.proto'],
      log: createLogger('contracts-stub', 'silent'),
    });
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      CONTRACTS_LICENSING_GRPC_ADDR: `127.0.0.1:${mail.port}`,
      PUBLIC_URL: 'https://platform.example/',
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      SIGNUP_MAX_PER_ADDRESS: String(MAX_SIGNUPS),
      SIGNUP_WINDOW: '10m',
      OUTBOX_RELAY_INTERVAL_MS: '200',
    });
    identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
    settings = createClient(orgsTeamsSettingsV1.SiteSettingsServiceService, app.address, { name: 'orgs-teams' });
  });
  afterAll(async () => {
    identity?.close();
    settings?.close();
    await app?.stop();
    await mail?.shutdown(100);
    await authz?.server.shutdown(100);
  });

  it('follows the switch and the allowed domains from the very next attempt, validates as creation does, and limits sign-ups per address', async () => {
    // 1: registration disabled; nothing is made.
    await settings.setRegistration({ disableRegistration: true, userId: 1 });
    expect(await refusal(signUp('nina'))).toEqual({ status: 403, message: 'registration is disabled on this site' });
    expect(await exists('nina')).toBe(false);

    // 2: enabled again; the new account is signed in, its address not verified yet.
    await settings.setRegistration({ disableRegistration: false, userId: 1 });
    const made = await signUp('nina');
    expect(made.user).toMatchObject({ login: 'nina', isAdmin: false, email: 'nina@example.com', emailVerified: false });
    expect(made.session?.secret).toEqual(expect.any(String));

    // 3, 4: the validation and conflicts of a site admin's creation.
    expect(await refusal(signUp('nina', 'other@example.com'))).toMatchObject({ status: 409 });
    const invalid = await refusal(signUp('bad name', 'not-an-email', 'short'));
    expect(invalid).toMatchObject({ status: 422 });
    expect((invalid as { message: string }).message).toContain('username');
    expect((invalid as { message: string }).message).toContain('password');

    // 5, 6: with allowed domains, only their addresses, in any case; there no session starts until the address is verified.
    await settings.addAllowedDomain({ name: 'corp.example', userId: 1 });
    expect(await refusal(signUp('omar', 'omar@example.com'))).toEqual({
      status: 403,
      message: 'sign-up is open to email addresses of corp.example only',
    });
    const omar = await signUp('omar', 'omar@CORP.example');
    expect(omar.user).toMatchObject({ login: 'omar', emailVerified: false });
    expect(omar.session).toBeUndefined();

    // 7 then 8: the address has made its sign-ups for this window (refused ones count too); another address has not.
    expect((await signUp('pia', 'pia@corp.example')).user?.login).toBe('pia');
    const limited = await signUp('quinn', 'quinn@corp.example').catch((e) => e);
    expect(limited).toMatchObject({
      httpStatus: 429,
      message: expect.stringMatching(/^too many sign-ups from this address; try again in \d+ s$/),
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(await exists('quinn')).toBe(false);
    expect((await signUp('quinn', 'quinn@corp.example', 'signup-password', '192.0.2.2')).user?.login).toBe('quinn');

    // Each account made by sign-up is mailed the link verifying its address.
    await eventually(async () => ['nina@example.com', 'omar@CORP.example', 'pia@corp.example'].every((to) => mailed.includes(to)), 10_000);
  });

  it('verifies what a site admin makes or sets, and mails no link to an address verified already', async () => {
    const ruth = await identity.createUser({
      username: 'ruth',
      email: 'ruth@example.com',
      password: 'ruth-password',
      fullName: '',
      mustChangePassword: false,
      isAdmin: false,
    });
    expect(ruth.emailVerified).toBe(true);
    expect(await refusal(identity.sendVerificationMail({ userId: ruth.id, login: '' }))).toMatchObject({ status: 409 });

    const nina = await identity.getUser({ id: 0, login: 'nina' });
    expect(nina.emailVerified).toBe(false);
    expect(await identity.editUser({ login: 'nina', email: 'nina@corp.example', editorId: 1 })).toMatchObject({
      email: 'nina@corp.example',
      emailVerified: true,
    });
    expect(await refusal(identity.sendVerificationMail({ userId: nina.id, login: '' }))).toMatchObject({ status: 409 });
  });
});
