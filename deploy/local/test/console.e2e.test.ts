import * as fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { ConsoleBrowser, describeInBrowser, launchConsoleChromium, until } from './console-browser';
import { ROOT_PASSWORD } from './harness';

/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against the platform with the
 * demo data and billing on, as `DEMO_SEED_MANIFEST=... BILLING_ENABLED=true npm start` runs it: the demo owner
 * and the site admin sign in and use their screens the way a person would, by role and name. Every screen is
 * saved as a screenshot under reports/console for review; no screen may log an error or a CSP refusal.
 */
jest.setTimeout(60_000);

describeInBrowser('the web console in a browser', () => {
  let demo: DemoPlatform;
  let browser: Browser;
  let web: ConsoleBrowser;
  let base: string;

  beforeAll(async () => {
    [demo, browser] = await Promise.all([bootDemoPlatform(), launchConsoleChromium()]);
    web = new ConsoleBrowser(browser, demo.t.platform.url);
    base = web.base;
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
  });
  afterEach(() => {
    expect(web.problems.splice(0)).toEqual([]);
  });

  it('signs the demo owner in with a password, lists the orgs, and signs out deleting the session token', async () => {
    const { context, page } = await web.newPage();
    await page.goto(`${base}/`);
    await web.shot(page, 'sign-in');
    await web.signIn(page, demo.manifest.owner.username, demo.manifest.owner.password);
    await page.getByRole('link', { name: 'demo', exact: true }).waitFor();
    await web.shot(page, 'orgs');
    const token = await web.sessionToken(page);
    expect((await demo.t.api(undefined, 'GET', '/user', undefined, { authorization: `token ${token}` })).status).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect((await demo.t.api(undefined, 'GET', '/user', undefined, { authorization: `token ${token}` })).status).toBe(401);
    await context.close();
  });

  it('signs in with a pasted token, and keeps the token at sign-out', async () => {
    const { context, page } = await web.newPage();
    const token = demo.t.tokens[demo.manifest.owner.username];
    await page.goto(`${base}/orgs/demo`);
    await page.getByRole('tab', { name: 'Access token' }).click();
    await page.getByRole('textbox', { name: 'Token', exact: true }).fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back where the person was going.
    await page.getByRole('heading', { name: 'demo', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect((await demo.t.api(demo.manifest.owner.username, 'GET', '/user')).status).toBe(200);
    await context.close();
  });

  it('shows the API’s message when sign-in is refused, and validates before sending', async () => {
    const { context, page } = await web.newPage();
    await page.goto(`${base}/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Username is required');
    await page.getByRole('textbox', { name: 'Username', exact: true }).fill(demo.manifest.owner.username);
    await page.getByRole('textbox', { name: 'Password', exact: true }).fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: '401' }).waitFor();
    await context.close();
  });

  it('lets the demo owner create an organization, a team and a custom role, and assign the role to the team', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, demo.manifest.owner.username, demo.manifest.owner.password);
    const org = `console-${Date.now().toString(36)}`;
    await page.getByRole('textbox', { name: 'Organization name' }).fill(org);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('link', { name: org, exact: true }).click();
    await page.getByRole('heading', { name: org, level: 1 }).waitFor();
    await web.shot(page, 'members');

    await page.getByRole('link', { name: 'Teams' }).click();
    await page.getByRole('textbox', { name: 'Team name' }).fill('operators');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('link', { name: 'operators', exact: true }).waitFor();

    await page.getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('textbox', { name: 'Role name' }).fill('Team editors');
    await page.getByRole('checkbox', { name: /\(edit:team\)/ }).check();
    await page.getByRole('group', { name: 'Assigned teams' }).getByRole('checkbox', { name: 'operators' }).check();
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('link', { name: 'Team editors', exact: true }).waitFor();
    await web.shot(page, 'roles');

    // The API agrees: the team carries the role.
    const teams = await demo.t.api(demo.manifest.owner.username, 'GET', `/orgs/${org}/teams`);
    const roles = await demo.t.api(demo.manifest.owner.username, 'GET', `/authz/roles?org=${org}`);
    const role = roles.body.find((r: { name: string }) => r.name === 'Team editors');
    expect(teams.body.find((t: { name: string }) => t.name === 'operators').role_ids).toEqual([role.id]);

    await page.getByRole('link', { name: 'Teams' }).click();
    // On the teams table itself (the roles screen, still showing for a moment, has a cell of that name too).
    const teamsTable = page.getByRole('table', { name: new RegExp(`^Teams of ${org}`) });
    await teamsTable.getByRole('cell', { name: 'Team editors', exact: true }).waitFor();
    await web.shot(page, 'teams');
    await context.close();
  });

  it('shows the demo org’s hub with its spokes, and its cluster sets', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, demo.manifest.owner.username, demo.manifest.owner.password);
    await page.goto(`${base}/orgs/demo/clusters`);
    const hub = demo.manifest.hub.name;
    await page.getByRole('table', { name: `Managed clusters of ${hub}` }).getByRole('cell', { name: demo.manifest.spokes[0].name, exact: true }).waitFor();
    await web.shot(page, 'clusters');
    await page.getByRole('link', { name: hub, exact: true }).first().click();
    await page.getByRole('table', { name: `Cluster sets of ${hub}` }).waitFor();
    await web.shot(page, 'hub');
    await context.close();
  });

  it('shows the admin the demo month’s usage as a chart with its table, and downloads the PDF summary', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    const { year, month, product } = demo.usage;
    const monthName = new Date(Date.UTC(Number(year), Number(month) - 1, 1)).toLocaleString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('combobox', { name: 'Month' }).selectOption({ label: monthName });
    await page.getByRole('img', { name: `Usage of ${product} by cluster, ${monthName}` }).waitFor();
    const table = page.getByRole('table', { name: `Daily CPU core-hours of ${product} by cluster, ${monthName}` });
    await table.waitFor();
    // One row per day of the month, and the demo's usage in them.
    const days = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
    expect(await table.locator('tbody tr').count()).toBe(days);
    expect(await table.locator('tbody').textContent()).toMatch(/[1-9]/);
    await web.shot(page, 'billing');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PDF' }).click()]);
    const pdf = fs.readFileSync((await download.path())!);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(download.suggestedFilename()).toBe(`usage-summary-productdb-${year}-${String(month).padStart(2, '0')}.pdf`);

    await page.getByRole('link', { name: 'Licensed users and clusters' }).click();
    await page.getByRole('link', { name: demo.manifest.owner.org, exact: true }).first().waitFor();
    await web.shot(page, 'licensed');
    await context.close();
  });

  it('lets the demo owner issue a license for a bound cluster and download it', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, demo.manifest.owner.username, demo.manifest.owner.password);
    await page.goto(`${base}/orgs/demo/contracts`);
    await page.getByRole('link', { name: 'Demo enterprise (productdb)' }).click();
    const hub = demo.manifest.hub.name;
    await page.getByRole('button', { name: `Issue license for ${hub}` }).click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: `Download license for ${hub}` }).click(),
    ]);
    const pem = fs.readFileSync((await download.path())!, 'utf8');
    expect(pem).toMatch(/^-----BEGIN CERTIFICATE-----/);
    await web.shot(page, 'contract');
    await context.close();
  });

  it('keeps the admin screens from a non-admin, and the API refuses them anyway', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, demo.manifest.owner.username, demo.manifest.owner.password);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Organizations' }).waitFor();
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Organizations']);
    await page.goto(`${base}/admin/billing`);
    await page.getByText('This screen is for site admins.').waitFor();
    const token = await web.sessionToken(page);
    const refused = await demo.t.api(undefined, 'GET', '/dashboard/summary/generated-months?org=demo', undefined, { authorization: `token ${token}` });
    expect(refused.status).toBe(403);
    await context.close();
  });

  it('shows the site admin every admin screen without an error', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    for (const [link, heading, name] of [
      ['Contracts', 'Contracts', 'admin-contracts'],
      ['Client organizations', 'Client organizations', 'client-orgs'],
      ['System outages', 'System outages', 'outages'],
      ['Marketplace', 'Marketplace', 'marketplace'],
      ['Service accounts', 'Service accounts', 'admin-service-accounts'],
      ['Site settings', 'Site settings', 'settings'],
    ]) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click();
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
      expect({ screen: name, errors: await page.getByRole('alert').allTextContents() }).toEqual({ screen: name, errors: [] });
      await web.shot(page, name);
    }
    await context.close();
  });

  it('changes the console’s own title and header when the admin changes the branding', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    await page.goto(`${base}/admin/settings`);
    await page.getByRole('textbox', { name: 'App name' }).fill('Acme Cloud');
    await page.getByRole('button', { name: 'Save branding' }).click();
    await until(async () => (await page.title()) === 'Acme Cloud');
    await page.getByRole('banner').getByText('Acme Cloud').waitFor();
    // A new visitor sees it too, on the sign-in page.
    const other = await web.newPage();
    await other.page.goto(`${base}/`);
    await other.page.getByRole('heading', { name: 'Sign in to Acme Cloud' }).waitFor();
    await other.context.close();
    await context.close();
  });

  it('is usable with the keyboard and readable 390 pixels wide', async () => {
    const { context, page } = await web.newPage(390);
    await page.goto(`${base}/`);
    // Sign in without the mouse: focus moves through the fields and Enter submits.
    await page.getByRole('textbox', { name: 'Username', exact: true }).focus();
    await page.keyboard.type(demo.manifest.owner.username);
    await page.keyboard.press('Tab');
    await page.keyboard.type(demo.manifest.owner.password);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    for (const [route, name] of [
      ['/orgs', 'narrow-orgs'],
      ['/orgs/demo/teams', 'narrow-teams'],
      ['/orgs/demo/clusters', 'narrow-clusters'],
    ]) {
      await page.goto(`${base}${route}`);
      await page.waitForLoadState('networkidle');
      // Nothing wider than the screen: wide tables scroll inside their own frame.
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect({ route, overflow }).toEqual({ route, overflow: 0 });
      await web.shot(page, name);
    }
    await context.close();
  });
});
