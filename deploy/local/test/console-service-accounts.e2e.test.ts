import type { Browser, Page } from 'playwright-core';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { ConsoleBrowser, describeInBrowser, launchConsoleChromium } from './console-browser';
import { ROOT_PASSWORD } from './harness';

/**
 * The service-account screens of the web console in a real browser, against the platform with the demo data: the
 * demo organization's owner makes a service account holding a custom role, mints its token (the secret shown once,
 * and it works over REST), sees it listed and revokes it, edits, deactivates and deletes the account; the site
 * admin makes a site-wide one that is a site admin. The API is asked each time whether it agrees.
 */
jest.setTimeout(90_000);

describeInBrowser('service accounts in the web console', () => {
  let demo: DemoPlatform;
  let browser: Browser;
  let web: ConsoleBrowser;
  let role: { id: number; name: string };
  const owner = () => demo.manifest.owner;
  /** A REST call presenting a service account's token, as another team's service would. */
  const asAccount = (token: string, path: string) => demo.t.api(undefined, 'GET', path, undefined, { authorization: `Bearer ${token}` });

  beforeAll(async () => {
    [demo, browser] = await Promise.all([bootDemoPlatform(), launchConsoleChromium()]);
    web = new ConsoleBrowser(browser, demo.t.platform.url);
    const made = await demo.t.api(owner().username, 'POST', `/authz/roles?org=${owner().org}`, {
      name: 'Team creators',
      description: 'Create teams',
      permissions: [{ namespace: 'team', action: 'create' }],
    });
    expect(made.status).toBe(201);
    role = made.body;
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
  });
  afterEach(() => {
    expect(web.problems.splice(0)).toEqual([]);
  });

  /** The organization's service accounts screen, through its tab. */
  async function openOrgAccounts(page: Page) {
    await page.goto(`${web.base}/orgs/${owner().org}`);
    await page.getByRole('navigation', { name: `Organization ${owner().org}` }).getByRole('link', { name: 'Service accounts' }).click();
    await page.getByRole('heading', { name: 'New service account' }).waitFor();
  }

  /** Mints a token on an account's page; the secret as the page shows it, with the promise never to show it again. */
  async function mintToken(page: Page, name: string): Promise<string> {
    await page.getByRole('textbox', { name: 'Token name', exact: true }).fill(name);
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByRole('region', { name: `New token ${name}` });
    await shown.getByText('Copy the token now: you will not see it again.').waitFor();
    const secret = await shown.getByRole('textbox', { name: `Token ${name}`, exact: true }).inputValue();
    expect(secret).toMatch(/^[0-9a-f]{40}$/);
    return secret;
  }

  it("lets an organization's owner create a service account with a custom role, mint a token shown once, and revoke it", async () => {
    const { context, page } = await web.newPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: web.base });
    await web.signIn(page, owner().username, owner().password);
    await openOrgAccounts(page);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('billing-worker');
    await page.getByRole('textbox', { name: 'Description', exact: true }).fill('Billing checks');
    await page.getByRole('group', { name: 'Custom roles' }).getByRole('checkbox', { name: role.name }).check();
    // Binding Kubernetes ServiceAccounts is a site admin's: the owner's form has no field for them.
    expect(await page.getByRole('textbox', { name: 'Kubernetes subjects' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Create service account' }).click();
    const list = page.getByRole('table', { name: new RegExp(`^Service accounts of ${owner().org}`) });
    await list.getByRole('link', { name: 'billing-worker', exact: true }).waitFor();
    await list.getByRole('cell', { name: role.name, exact: true }).waitFor();
    await web.shot(page, 'service-accounts');

    // The API agrees: the account holds the role.
    const accounts = await demo.t.api(owner().username, 'GET', `/orgs/${owner().org}/service-accounts`);
    expect(accounts.body).toEqual([
      expect.objectContaining({
        name: 'billing-worker',
        description: 'Billing checks',
        org: owner().org,
        roles: [role.id],
        kubernetes_subjects: [],
        active: true,
        created_by: expect.objectContaining({ login: owner().username }),
      }),
    ]);

    await list.getByRole('link', { name: 'billing-worker', exact: true }).click();
    await page.getByRole('heading', { name: 'Service account billing-worker' }).waitFor();
    const secret = await mintToken(page, 'pipeline');
    await page.getByRole('button', { name: 'Copy token' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    const tokens = page.getByRole('table', { name: 'Tokens of billing-worker' });
    const row = tokens.getByRole('row').filter({ hasText: 'pipeline' });
    await row.getByRole('cell', { name: `…${secret.slice(-8)}` }).waitFor();
    await row.getByRole('cell', { name: 'never', exact: true }).waitFor();
    await web.shot(page, 'service-account-token');

    // The token works as the account over REST.
    const me = await asAccount(secret, '/user');
    expect(me).toMatchObject({ status: 200, body: { login: 'billing-worker' } });
    expect((await asAccount(secret, `/orgs/${owner().org}/teams`)).status).toBe(200);

    // Once: gone when put away, and nowhere after a reload, where the list shows its last eight characters and its use.
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('region', { name: 'New token pipeline' }).waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await row.getByRole('cell', { name: `…${secret.slice(-8)}` }).waitFor();
    expect(await row.getByRole('cell').nth(3).textContent()).not.toBe('never');
    expect(await page.content()).not.toContain(secret);

    await row.getByRole('button', { name: 'Revoke pipeline' }).click();
    await page.getByRole('button', { name: 'Confirm revoke pipeline' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked token pipeline' }).waitFor();
    await page.getByText('Tokens of billing-worker: none yet').waitFor();
    expect((await asAccount(secret, '/user')).status).toBe(401);
    await context.close();
  });

  it('is readable 390 pixels wide, a new secret included', async () => {
    const { context, page } = await web.newPage(390);
    await web.signIn(page, owner().username, owner().password);
    await openOrgAccounts(page);
    await page.getByRole('link', { name: 'billing-worker', exact: true }).click();
    await mintToken(page, 'narrow');
    await page.waitForLoadState('networkidle');
    // Nothing wider than the screen: wide tables scroll inside their own frame.
    expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
    await web.shot(page, 'narrow-service-account');
    await context.close();
  });

  it('edits, deactivates, activates and deletes it after a confirmation', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, owner().username, owner().password);
    await openOrgAccounts(page);
    await page.getByRole('link', { name: 'billing-worker', exact: true }).click();
    const secret = await mintToken(page, 'worker');
    const [account] = (await demo.t.api(owner().username, 'GET', `/orgs/${owner().org}/service-accounts`)).body;
    const current = () => demo.t.api(owner().username, 'GET', `/orgs/${owner().org}/service-accounts/${account.id}`);

    const edit = page.getByRole('form', { name: 'Edit service account billing-worker' });
    await edit.getByRole('textbox', { name: 'Description', exact: true }).fill('Billing checks, read only');
    await edit.getByRole('checkbox', { name: role.name }).uncheck();
    await edit.getByRole('button', { name: 'Save service account' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved service account billing-worker.' }).waitFor();
    expect((await current()).body).toMatchObject({ description: 'Billing checks, read only', roles: [], kubernetes_subjects: [] });

    await page.getByRole('button', { name: 'Deactivate billing-worker' }).click();
    // Exact: "Activate billing-worker" is also a part of "Deactivate billing-worker", which a name matches by default.
    await page.getByRole('button', { name: 'Activate billing-worker', exact: true }).waitFor();
    expect((await current()).body.active).toBe(false);
    expect((await asAccount(secret, '/user')).status).toBe(401);
    await page.getByRole('button', { name: 'Activate billing-worker', exact: true }).click();
    await page.getByRole('button', { name: 'Deactivate billing-worker' }).waitFor();
    expect((await asAccount(secret, '/user')).status).toBe(200);

    await page.getByRole('button', { name: 'Delete billing-worker' }).click();
    await page.getByRole('button', { name: 'Confirm delete billing-worker' }).click();
    await page.getByText(`Service accounts of ${owner().org} (0): none yet`).waitFor();
    expect((await current()).status).toBe(404);
    expect((await asAccount(secret, '/user')).status).toBe(401);
    await context.close();
  });

  it('lets the site admin create a site-wide service account that is a site admin', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    await web.openAdminScreen(page, 'Service accounts');
    await page.getByRole('heading', { name: 'Service accounts', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('site-auditor');
    await page.getByRole('textbox', { name: 'Description', exact: true }).fill('Reads the audit trail');
    await page.getByRole('checkbox', { name: 'Site admin' }).check();
    await page.getByRole('textbox', { name: 'Kubernetes subjects' }).fill('ops/auditor\n');
    await page.getByRole('button', { name: 'Create service account' }).click();
    const list = page.getByRole('table', { name: /^Site-wide service accounts/ });
    await list.getByRole('row').filter({ hasText: 'site-auditor' }).getByRole('cell', { name: 'yes', exact: true }).waitFor();
    await web.shot(page, 'site-service-accounts');
    const accounts = await demo.t.api('root', 'GET', '/admin/service-accounts');
    expect(accounts.body).toEqual([
      expect.objectContaining({ name: 'site-auditor', org: null, roles: [], site_admin: true, kubernetes_subjects: ['ops/auditor'], active: true }),
    ]);

    await list.getByRole('link', { name: 'site-auditor', exact: true }).click();
    const secret = await mintToken(page, 'audit');
    expect((await asAccount(secret, '/admin/audit-events')).status).toBe(200);
    await context.close();
  });
});
