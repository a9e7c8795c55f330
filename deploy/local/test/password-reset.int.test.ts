import { eventually } from '@platform/testing';
import { basic, bootTestPlatform, type Reply, type TestPlatform } from './harness';

// A forgotten password, end to end through the API as the console drives it (docs/authentication.md, "Forgotten
// passwords"): the mail is kept by contracts-licensing without SMTP_URL and read back from the site admins' list. The
// last case follows the other mailed link the same way: a sign-up's, verifying its address ("Verified e-mail
// addresses"); sign-up's rules row by row: apps/orgs-teams/test/signup.int.test.ts, apps/gateway/test/signup.test.ts.

describe('forgotten password: a reset link by mail', () => {
  let harness: TestPlatform;

  beforeAll(async () => {
    harness = await bootTestPlatform(
      {
        PUBLIC_URL: 'https://platform.example/',
        PASSWORD_RESET_MAX_PER_ACCOUNT: '2',
        PASSWORD_RESET_MAX_PER_ADDRESS: '50',
      },
      { apps: ['authz', 'orgs-teams', 'contracts-licensing'] },
    );
    await harness.signUp('nora');
  }, 120_000);
  afterAll(() => harness?.stop());

  // Sent as if through a proxy naming another host: links must not be built on what a request says its host is.
  const ask = (login: string) =>
    harness.api(undefined, 'POST', '/user/password-reset', { login }, { host: 'attacker.example', 'x-forwarded-host': 'attacker.example' });
  const mailsTo = async (to: string) =>
    (
      (await harness.api('root', 'GET', '/admin/notifications/mails')).body as { recipient: string; subject: string; text: string }[]
    ).filter((m) => m.recipient === to);
  /** Waits for the `n`th kept mail to `to` and answers the link in it. */
  const linkOfMail = async (to: string, n: number) => {
    await eventually(async () => (await mailsTo(to)).length >= n, 15_000);
    const mail = (await mailsTo(to))[0];
    expect(mail.subject).toBe('Reset your password');
    return new URL(/https:\/\/\S+/.exec(mail.text)![0]);
  };
  /** What a client can tell of an answer: its status, its body and its headers but those that change on every answer. */
  const seen = (reply: Reply) => ({
    status: reply.status,
    body: reply.body,
    headers: [...reply.headers].filter(([name]) => !['date', 'x-request-id', 'traceparent'].includes(name)),
  });
  const session = (login: string, password: string) =>
    harness.api(undefined, 'POST', '/user/session', undefined, { authorization: basic(login, password) });

  it('sets a new password once by the mailed link, ends the sessions, keeps the tokens, and answers unknown names alike', async () => {
    const signedIn = await session('nora', 'nora-password');
    expect(signedIn.status).toBe(201);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0];

    const known = await ask('nora');
    const unknown = await ask('nobody-at-all');
    expect(known.status).toBe(204);
    expect(seen(unknown)).toEqual(seen(known));
    expect(seen(await ask('nobody@example.com'))).toEqual(seen(known));

    // The link is on the configured public URL, whatever Host the request named, with the code in the fragment.
    const link = await linkOfMail('nora@example.com', 1);
    expect(`${link.origin}${link.pathname}`).toBe('https://platform.example/reset-password');
    const code = new URLSearchParams(link.hash.slice(1)).get('code')!;
    expect(code).toBeTruthy();
    expect(link.search).toBe('');

    const checked = await harness.api(undefined, 'POST', '/user/password-reset/check', { code });
    expect(checked).toMatchObject({ status: 200, body: { login: 'nora', expires_at: expect.any(String) } });
    expect((await harness.api(undefined, 'POST', '/user/password-reset/new-password', { code, new_password: 'short' })).status).toBe(422);
    const set = await harness.api(undefined, 'POST', '/user/password-reset/new-password', { code, new_password: 'nora-new-password' });
    expect(set.status).toBe(204);

    expect((await session('nora', 'nora-new-password')).status).toBe(201);
    expect((await session('nora', 'nora-password')).status).toBe(401);
    // Whoever knew the old password may have signed in with it: that session is over. The token is its own credential.
    expect((await harness.api(undefined, 'GET', '/user', undefined, { cookie })).status).toBe(401);
    expect((await harness.api('nora', 'GET', '/user')).body).toMatchObject({ login: 'nora' });

    const again = await harness.api(undefined, 'POST', '/user/password-reset/new-password', { code, new_password: 'nora-third-password' });
    expect(again).toMatchObject({ status: 400, body: { message: 'this password reset link is not valid any more: ask for a new one' } });
    expect((await session('nora', 'nora-third-password')).status).toBe(401);

    // The reset is in the audit trail, the account as its actor (sent after the answer: it may take a moment).
    const resets = async () => (await harness.api('root', 'GET', '/admin/audit-events?action=userResetPassword')).body as unknown[];
    await eventually(async () => (await resets()).length > 0, 5_000);
    expect(await resets()).toEqual([
      expect.objectContaining({ actor: { id: harness.ids.nora, login: 'nora' }, route: '/user/password-reset/new-password' }),
    ]);
  }, 60_000);

  it('limits requests per name with 429 and Retry-After, for unknown names as for accounts', async () => {
    // Each name gets two per window: nora asked once above.
    expect((await ask('nora')).status).toBe(204);
    for (let i = 0; i < 2; i += 1) expect((await ask('no-such-person')).status).toBe(204);
    for (const name of ['nora', 'no-such-person']) {
      const refused = await ask(name);
      expect(refused.status).toBe(429);
      expect(refused.body.message).toMatch(/^too many password-reset requests for this account; try again in \d+ s$/);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }, 60_000);

  it('verifies a sign-up by its mailed link: until it is followed the password does not sign in where domains are listed', async () => {
    expect((await harness.api('root', 'POST', '/disable-registration?org=platform-admin', { disableRegistration: false })).status).toBe(
      200,
    );
    expect((await harness.api('root', 'POST', '/allowed-domains?org=platform-admin', { name: 'corp.example' })).status).toBe(200);
    const made = await harness.api(undefined, 'POST', '/user/signup', {
      username: 'omar',
      email: 'omar@CORP.example',
      password: 'signup-password',
    });
    expect(made).toMatchObject({ status: 201, body: { user: { login: 'omar', email_verified: false }, session: null } });
    const refused = await session('omar', 'signup-password');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/^your e-mail address omar@CORP\.example is not verified yet/);

    // The link is on the configured public URL; the page it opens verifies the address once.
    await eventually(async () => (await mailsTo('omar@CORP.example')).length >= 1, 15_000);
    const mail = (await mailsTo('omar@CORP.example'))[0];
    expect(mail.subject).toBe('Verify your e-mail address');
    const link = /https:\/\/platform\.example\/api\/v1(\S+)/.exec(mail.text)![1];
    const followed = await harness.send(undefined, 'GET', link);
    expect(followed.status).toBe(200);
    expect(followed.body).toContain('omar@CORP.example is verified');
    expect((await harness.send(undefined, 'GET', link)).status).toBe(400);

    expect((await session('omar', 'signup-password')).status).toBe(201);
    expect((await harness.api('root', 'GET', '/admin/users?q=omar')).body).toEqual([
      expect.objectContaining({ login: 'omar', email_verified: true }),
    ]);
  }, 60_000);
});
