import type { Browser, Page } from 'playwright-core';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { ConsoleBrowser, describeInBrowser, launchConsoleChromium } from './console-browser';
import { basic, ROOT_PASSWORD } from './harness';

/**
 * The site admin's users, all-organizations and audit screens of the web console in a real browser, against the
 * platform with the demo data: the admin finds a user and deactivates them (their token is refused on the very next
 * call), lifts a sign-in lockout (their password works again), deletes a user who alone owns an organization after
 * confirming that the organization goes too, browses every organization, and filters the audit trail down to what
 * was just done. The API is asked each time whether it agrees.
 */
jest.setTimeout(90_000);

describeInBrowser('the site admin’s user, organization and audit screens in the web console', () => {
  let demo: DemoPlatform;
  let browser: Browser;
  let web: ConsoleBrowser;
  /** A REST call as a user's token, as their client would make it. */
  const asToken = (token: string, path: string) => demo.t.api(undefined, 'GET', path, undefined, { authorization: `token ${token}` });

  beforeAll(async () => {
    // A low account limit, so a lockout is reached in a few tries.
    [demo, browser] = await Promise.all([bootDemoPlatform({ LOGIN_MAX_FAILURES_PER_ACCOUNT: '3' }), launchConsoleChromium()]);
    web = new ConsoleBrowser(browser, demo.t.platform.url);
    for (const login of ['ellen', 'frank', 'gina']) await demo.t.signUp(login);
    expect((await demo.t.api('gina', 'POST', '/orgs', { username: 'gina-co' })).status).toBe(201);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
  });
  afterEach(() => {
    expect(web.problems.splice(0)).toEqual([]);
  });

  /** The users screen through the navigation, searched for `q`; the row of `login`. */
  async function findUser(page: Page, q: string, login: string) {
    await web.openAdminScreen(page, 'Users');
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await page.getByRole('searchbox', { name: 'Login or email' }).fill(q);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const table = page.getByRole('table', { name: new RegExp(`^Users matching “${q}”`) });
    await table.waitFor();
    return table.getByRole('row').filter({ has: page.getByRole('button', { name: `Edit ${login}`, exact: true }) });
  }

  it('finds a user and deactivates them: their token is refused on the very next call', async () => {
    const token = demo.t.tokens.ellen;
    expect((await asToken(token, '/user')).status).toBe(200);
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    const row = await findUser(page, 'ellen@example', 'ellen');
    await row.getByRole('cell', { name: 'active', exact: true }).waitFor();
    await row.getByRole('button', { name: 'Edit ellen' }).click();
    const form = page.getByRole('form', { name: 'Edit user ellen' });
    await form.getByRole('checkbox', { name: 'Active' }).uncheck();
    await form.getByRole('button', { name: 'Save user' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved user ellen.' }).waitFor();
    await row.getByRole('cell', { name: 'inactive', exact: true }).waitFor();
    expect(await asToken(token, '/user')).toMatchObject({ status: 401, body: { message: 'user is not active' } });

    // One's own account offers neither deletion nor taking one's own rights.
    const own = await findUser(page, 'root', 'root');
    expect(await own.getByRole('button', { name: 'Delete root' }).count()).toBe(0);
    await own.getByRole('button', { name: 'Edit root' }).click();
    expect(await page.getByRole('form', { name: 'Edit user root' }).getByRole('checkbox', { name: 'Site admin' }).isDisabled()).toBe(true);
    await page.getByRole('form', { name: 'Edit user root' }).getByRole('button', { name: 'Close' }).click();
    await context.close();
  });

  it('lifts a sign-in lockout, shown only on the locked user', async () => {
    const signIn = (password: string) => demo.t.api(undefined, 'GET', '/users/frank/tokens', undefined, { authorization: basic('frank', password) });
    for (let i = 0; i < 3; i++) expect((await signIn('not-the-password')).status).toBe(401);
    expect((await signIn('frank-password')).status).toBe(429);
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    const row = await findUser(page, 'frank', 'frank');
    await row.getByText(/^locked until/).waitFor();
    // In the whole list too, where only frank offers it.
    await page.getByRole('button', { name: 'Show all' }).click();
    const all = page.getByRole('table', { name: /^Users \(\d+\)$/ });
    await all.getByRole('button', { name: 'Lift lockout of frank' }).waitFor();
    expect(await all.getByRole('button', { name: /^Lift lockout of / }).count()).toBe(1);
    await web.shot(page, 'admin-users');
    await all.getByRole('button', { name: 'Lift lockout of frank' }).click();
    await page.getByRole('status').filter({ hasText: 'Lifted the sign-in lockout of frank.' }).waitFor();
    await all.getByRole('button', { name: 'Lift lockout of frank' }).waitFor({ state: 'detached' });
    expect((await signIn('frank-password')).status).toBe(200);
    await context.close();
  });

  it('deletes a user who alone owns an organization once told that the organization goes too', async () => {
    const token = demo.t.tokens.gina;
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    const row = await findUser(page, 'gina', 'gina');
    await row.getByRole('button', { name: 'Delete gina' }).click();
    await row.getByRole('button', { name: 'Confirm delete gina' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'gina is the last owner of gina-co.' });
    await refusal.waitFor();
    // Refused: nothing is gone yet.
    expect((await asToken(token, '/user')).status).toBe(200);
    await refusal.getByRole('button', { name: 'Also delete gina-co' }).click();
    await refusal.getByRole('button', { name: 'Confirm delete gina and gina-co' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted user gina and the organizations they alone owned.' }).waitFor();
    await page.getByText('Users matching “gina” (0): no user matches.').waitFor();
    expect((await asToken(token, '/user')).status).toBe(401);
    expect((await demo.t.api('root', 'GET', '/users/gina')).status).toBe(404);
    expect((await demo.t.api('root', 'GET', '/orgs/gina-co')).status).toBe(404);
    await context.close();
  });

  it('browses every organization, private ones included, to an organization’s page', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    await web.openAdminScreen(page, 'All organizations');
    const table = page.getByRole('table', { name: /^All organizations \(\d+\)$/ });
    await table.getByRole('link', { name: 'platform-admin', exact: true }).waitFor();
    const listed = await demo.t.api('root', 'GET', '/admin/orgs?limit=50');
    expect(await table.getByRole('link').allTextContents()).toEqual(listed.body.map((o: { username: string }) => o.username));
    expect(listed.body.map((o: { username: string }) => o.username)).toEqual(expect.arrayContaining(['demo', 'platform-admin']));
    await web.shot(page, 'admin-orgs');
    await table.getByRole('link', { name: 'demo', exact: true }).click();
    await page.getByRole('heading', { name: 'demo', level: 1 }).waitFor();
    await context.close();
  });

  it('filters the audit events down to the changes made to one user', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    await web.openAdminScreen(page, 'Audit events');
    await page.getByRole('table', { name: /^Audit events \(\d+\)$/ }).waitFor();
    const filters = page.getByRole('form', { name: 'Filter audit events' });
    await filters.getByRole('textbox', { name: 'Actor' }).fill('root');
    await filters.getByRole('textbox', { name: 'Action' }).fill('adminEditUser');
    await filters.getByRole('textbox', { name: 'Target' }).fill('/admin/users/ellen');
    await filters.getByRole('button', { name: 'Filter' }).click();
    const table = page.getByRole('table', { name: 'Audit events matching the filters (1)' });
    await table.waitFor();
    const [event] = (await demo.t.api('root', 'GET', '/admin/audit-events?action=adminEditUser&target=/admin/users/ellen')).body;
    const row = table.getByRole('row').nth(1);
    await row.getByRole('cell', { name: 'root', exact: true }).waitFor();
    await row.getByRole('cell', { name: '/admin/users/ellen', exact: true }).waitFor();
    await row.getByText('Details').click();
    await row.getByText(event.request_id).waitFor();
    expect(page.url()).toContain('actor=root');
    await web.shot(page, 'admin-audit');
    await context.close();
  });

  it('is readable 390 pixels wide', async () => {
    const { context, page } = await web.newPage(390);
    await web.signIn(page, 'root', ROOT_PASSWORD);
    for (const [route, heading] of [
      ['/admin/users', 'Users'],
      ['/admin/orgs', 'All organizations'],
      ['/admin/audit', 'Audit events'],
    ]) {
      await page.goto(`${web.base}${route}`);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await page.getByRole('table').waitFor();
      // Nothing wider than the screen: wide tables scroll inside their own frame.
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect({ route, overflow }).toEqual({ route, overflow: 0 });
    }
    await context.close();
  });
});
