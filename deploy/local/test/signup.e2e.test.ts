import { eventually } from '@platform/testing';
import { basic, bootTestPlatform, type TestPlatform } from './harness';

// Few sign-ups per address, so the test reaches the limit.
const MAX_SIGNUPS = 7;

describe('sign-up honours the site settings', () => {
  let harness: TestPlatform;
  const signUp = (username: string, email = `${username}@example.com`, password = 'signup-password') =>
    harness.api(undefined, 'POST', '/user/signup', { username, email, password });
  const setRegistration = (disable: boolean) =>
    harness.api('root', 'POST', '/disable-registration?org=platform-admin', { disableRegistration: disable });

  beforeAll(async () => {
    harness = await bootTestPlatform({
      SIGNUP_MAX_PER_ADDRESS: String(MAX_SIGNUPS),
      SIGNUP_WINDOW: '10m',
      // Short, so the resends below are accepted after a wait for their turn rather than a minute.
      VERIFICATION_MAIL_INTERVAL: '1s',
      PUBLIC_URL: 'https://platform.example/',
    });
  }, 120_000);
  afterAll(() => harness?.stop());

  it('follows the toggle and the allowed domains from the very next request, validates as admin creation, and limits sign-ups per address', async () => {
    // 1: registration disabled.
    expect((await setRegistration(true)).status).toBe(200);
    const refused = await signUp('nina');
    expect(refused).toMatchObject({ status: 403, body: { message: 'registration is disabled on this site' } });
    expect((await harness.api('root', 'GET', '/users/nina')).status).toBe(404);

    // 2: enabled again; the new user is signed in by the answer's cookie.
    expect((await setRegistration(false)).status).toBe(200);
    const made = await signUp('nina');
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ user: { login: 'nina', is_admin: false }, session: { current: true }, csrf_token: expect.any(String) });
    const cookie = made.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^platform_session=.*HttpOnly.*SameSite=Strict/);
    const me = await harness.api(undefined, 'GET', '/user', undefined, { cookie: cookie.split(';')[0] });
    expect(me).toMatchObject({ status: 200, body: { login: 'nina', email: 'nina@example.com', email_verified: false } });

    // 3, 4: the validation and conflicts of admin creation.
    expect(await signUp('nina', 'other@example.com')).toMatchObject({ status: 409 });
    const invalid = await signUp('bad name', 'not-an-email', 'short');
    expect(invalid.status).toBe(422);
    expect(invalid.body.message).toContain('username');
    expect(invalid.body.message).toContain('password');

    // 5, 6: with allowed domains, only their emails.
    expect((await harness.api('root', 'POST', '/allowed-domains?org=platform-admin', { name: 'corp.example' })).status).toBe(200);
    const outside = await signUp('omar', 'omar@example.com');
    expect(outside).toMatchObject({ status: 403, body: { message: 'sign-up is open to email addresses of corp.example only' } });
    // There the address is what admits a person: no session until it is verified.
    expect(await signUp('omar', 'omar@CORP.example')).toMatchObject({ status: 201, body: { user: { login: 'omar' }, session: null } });

    // 7 then 8: the address has made its sign-ups for this window.
    expect((await signUp('pia', 'pia@corp.example')).status).toBe(201);
    const limited = await signUp('quinn', 'quinn@corp.example');
    expect(limited.status).toBe(429);
    expect(limited.body.message).toMatch(/^too many sign-ups from this address; try again in \d+ s$/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await harness.api('root', 'GET', '/users/quinn')).status).toBe(404);
  }, 60_000);

  /** The kept mails to `to` (no SMTP_URL: contracts-licensing keeps them for site admins), newest first. */
  const mailsTo = async (to: string) =>
    ((await harness.api('root', 'GET', '/admin/notifications/mails')).body as { recipient: string; subject: string; text: string }[]).filter(
      (m) => m.recipient.toLowerCase() === to.toLowerCase(),
    );
  /** Waits for the `n`th kept mail to `to` and answers the path of its link (on the configured public URL). */
  const linkOfMail = async (to: string, n: number) => {
    await eventually(async () => (await mailsTo(to)).length >= n, 15_000);
    const mail = (await mailsTo(to))[0];
    expect(mail.subject).toBe('Verify your e-mail address');
    const link = /https:\/\/platform\.example\/api\/v1\S+/.exec(mail.text)![0];
    return link.slice('https://platform.example/api/v1'.length);
  };
  const session = (login: string, password: string) =>
    harness.api(undefined, 'POST', '/user/session', undefined, { authorization: basic(login, password) });

  it('mails a link verifying the address; until it is followed the account cannot sign in where domains are listed', async () => {
    // omar signed up above, in the allowed domain: refused until verified, with the way to a new mail.
    const refused = await session('omar', 'signup-password');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/^your e-mail address omar@CORP\.example is not verified yet: open the link mailed to it, or ask for a new mail/);
    expect((await harness.api(undefined, 'POST', '/users/omar/tokens', { name: 'cli' }, { authorization: basic('omar', 'signup-password') })).status).toBe(403);

    const first = await linkOfMail('omar@CORP.example', 1);
    // A new mail, asked for anonymously once its turn comes, replaces the first link; unknown logins answer the same.
    expect((await harness.api(undefined, 'POST', '/user/verification-mail', { login: 'nobody-at-all' })).status).toBe(204);
    // Asked again until one falls after the interval (earlier ones are answered the same and mail nothing); each ask
    // waits for its mail long enough that no later ask replaces the link about to be read.
    for (let asked = 0; (await mailsTo('omar@CORP.example')).length < 2; asked++) {
      expect(asked).toBeLessThan(10);
      expect((await harness.api(undefined, 'POST', '/user/verification-mail', { login: 'omar' })).status).toBe(204);
      await eventually(async () => (await mailsTo('omar@CORP.example')).length >= 2, 3_000).catch(() => undefined);
    }
    const second = await linkOfMail('omar@CORP.example', 2);
    expect(second).not.toBe(first);
    const stale = await harness.send(undefined, 'GET', first);
    expect(stale.status).toBe(400);
    expect(stale.body).toContain('not valid any more');

    const followed = await harness.send(undefined, 'GET', second);
    expect(followed.status).toBe(200);
    expect(followed.body).toContain('omar@CORP.example is verified');
    expect((await harness.send(undefined, 'GET', second)).status).toBe(400);
    expect((await session('omar', 'signup-password')).status).toBe(201);
    const listed = (await harness.api('root', 'GET', '/admin/users?q=omar')).body;
    expect(listed).toEqual([expect.objectContaining({ login: 'omar', email_verified: true })]);
  }, 60_000);

  it("lets a site admin see and resend the state, vouches for what admins make and set, and hides the state with the address", async () => {
    expect((await harness.api('root', 'GET', '/admin/users?q=pia')).body).toEqual([expect.objectContaining({ email_verified: false })]);
    await linkOfMail('pia@corp.example', 1);
    await eventually(async () => (await harness.api('root', 'POST', '/admin/users/pia/verification-mail')).status === 204, 15_000);
    const fromAdmin = await linkOfMail('pia@corp.example', 2);
    expect((await harness.send(undefined, 'GET', fromAdmin)).status).toBe(200);
    expect((await harness.api('root', 'POST', '/admin/users/pia/verification-mail')).status).toBe(409);
    expect((await harness.api('root', 'POST', '/admin/users/nobody-at-all/verification-mail')).status).toBe(404);

    // Made or changed by a site admin: verified by that act.
    await harness.signUp('ruth');
    expect((await harness.api('ruth', 'GET', '/user')).body).toMatchObject({ email: 'ruth@example.com', email_verified: true });
    expect((await harness.api('root', 'PATCH', '/admin/users/nina', { email: 'nina@corp.example' })).body).toMatchObject({ email_verified: true });
    expect((await harness.api('ruth', 'POST', '/user/verification-mail', {})).status).toBe(409);
    // Another user sees neither nina's address nor whether it is verified.
    const seen = (await harness.api('ruth', 'GET', '/users/nina')).body;
    expect(seen.email).toBe('');
    expect(seen).not.toHaveProperty('email_verified');
  }, 60_000);
});
