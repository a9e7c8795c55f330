import * as fs from 'node:fs';
import type { Browser, Locator } from 'playwright-core';
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

/** A valid one-pixel PNG, the smallest avatar there is. */
const ONE_PIXEL_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

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

  it('signs the demo owner in with a password into a session cookie, lists the orgs, and signs out ending the session', async () => {
    const { context, page } = await web.newPage();
    await page.goto(`${base}/`);
    await web.shot(page, 'sign-in');
    await web.signIn(page, demo.manifest.owner.username, demo.manifest.owner.password);
    await page.getByRole('link', { name: 'demo', exact: true }).waitFor();
    await web.shot(page, 'orgs');
    const cookie = await web.sessionCookie(context);
    expect((await demo.t.api(undefined, 'GET', '/user', undefined, cookie)).status).toBe(200);
    // No token was minted for the sign-in.
    expect(await page.evaluate(`sessionStorage.getItem('platform.console.session')`)).toBeNull();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect((await demo.t.api(undefined, 'GET', '/user', undefined, cookie)).status).toBe(401);
    await context.close();
  });

  it("lists the browser's sessions on the account page, revokes another, and the revoked one's next call is 401", async () => {
    const owner = demo.manifest.owner;
    const other = await web.newPage();
    await web.signIn(other.page, owner.username, owner.password);
    const otherCookie = await web.sessionCookie(other.context);
    const { context, page } = await web.newPage();
    await web.signIn(page, owner.username, owner.password);
    await page.getByRole('link', { name: owner.username, exact: true }).click();
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    const sessions = page.getByRole('table', { name: 'Signed-in sessions' });
    await sessions.getByText('this session', { exact: true }).waitFor();
    // The owner's two browsers: this one, marked, and the other one.
    expect(await sessions.getByRole('row').count()).toBe(3);
    await web.shot(page, 'account');
    await sessions.getByRole('button', { name: 'Revoke' }).click();
    await sessions.getByRole('button', { name: 'Confirm revoke' }).click();
    await until(async () => (await sessions.getByRole('row').count()) === 2);
    expect((await demo.t.api(undefined, 'GET', '/user', undefined, otherCookie)).status).toBe(401);
    // The other browser finds itself signed out on its next call.
    await other.page.getByRole('link', { name: 'Organizations' }).click();
    await other.page.reload();
    await other.page.getByRole('button', { name: 'Sign in' }).waitFor();
    await other.context.close();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await context.close();
  });

  it('offers sign-up only while registration is enabled, and signs the new user in', async () => {
    const setRegistration = (disable: boolean) =>
      demo.t.api('root', 'POST', '/disable-registration?org=platform-admin', { disableRegistration: disable });
    expect((await setRegistration(true)).status).toBe(200);
    const closed = await web.newPage();
    await closed.page.goto(`${base}/`);
    await closed.page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await closed.page.getByRole('button', { name: 'Create an account' }).count()).toBe(0);
    await closed.context.close();

    expect((await setRegistration(false)).status).toBe(200);
    const { context, page } = await web.newPage();
    await page.goto(`${base}/`);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByRole('textbox', { name: 'Username', exact: true }).fill('newcomer');
    await page.getByRole('textbox', { name: 'Email', exact: true }).fill('newcomer@example.com');
    await page.getByRole('textbox', { name: 'Password', exact: true }).fill('newcomer-password');
    await page.getByRole('textbox', { name: 'Repeat the password', exact: true }).fill('newcomer-password');
    await web.shot(page, 'sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect((await demo.t.api(undefined, 'GET', '/user', undefined, await web.sessionCookie(context))).body.login).toBe('newcomer');
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

  it("lets an organization's owner edit its options and avatar, and delete it once its name is typed", async () => {
    const owner = demo.manifest.owner;
    const org = `settings-${Date.now().toString(36)}`;
    expect((await demo.t.api(owner.username, 'POST', '/orgs', { username: org })).status).toBe(201);
    const { context, page } = await web.newPage();
    await web.signIn(page, owner.username, owner.password);
    await page.goto(`${base}/orgs/${org}`);
    await page.getByRole('navigation', { name: `Organization ${org}` }).getByRole('link', { name: 'Settings', exact: true }).click();

    const options = page.getByRole('form', { name: 'Organization options' });
    await options.getByRole('textbox', { name: 'Full name', exact: true }).fill('Settings Test Inc');
    await options.getByRole('textbox', { name: 'Description', exact: true }).fill('Edited in the browser');
    await options.getByRole('textbox', { name: 'Website', exact: true }).fill('https://settings.example');
    await options.getByRole('textbox', { name: 'Location', exact: true }).fill('Lisbon');
    await options.getByRole('combobox', { name: 'Visibility' }).selectOption('limited');
    await options.getByRole('button', { name: 'Save options' }).click();
    await options.getByRole('status').filter({ hasText: `Saved the options of ${org}.` }).waitFor();
    expect((await demo.t.api(owner.username, 'GET', `/orgs/${org}`)).body).toMatchObject({
      full_name: 'Settings Test Inc',
      description: 'Edited in the browser',
      website: 'https://settings.example',
      location: 'Lisbon',
      visibility: 'limited',
    });

    // A new avatar, shown from the platform at once and answered by the API.
    const upload = page.getByRole('form', { name: 'New avatar' });
    await upload.getByLabel('Image').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: ONE_PIXEL_PNG });
    await upload.getByRole('button', { name: 'Upload avatar' }).click();
    await upload.getByRole('status').filter({ hasText: `The avatar of ${org} is the new image.` }).waitFor();
    await page.locator(`img[alt="Avatar of ${org}"][src*="/avatars/org/"]`).waitFor();
    expect((await demo.t.api(owner.username, 'GET', `/orgs/${org}/avatar/`)).body).toMatch(/\/api\/v1\/objects\/avatars\/org\//);
    await web.shot(page, 'org-settings');

    // Deleting waits for the name, typed out.
    const deletion = page.getByRole('form', { name: `Delete organization ${org}` });
    const confirm = deletion.getByRole('button', { name: `Delete organization ${org}`, exact: true });
    await deletion.getByRole('textbox', { name: `Type ${org} to confirm` }).fill(org.slice(0, -1));
    expect(await confirm.isDisabled()).toBe(true);
    await deletion.getByRole('textbox', { name: `Type ${org} to confirm` }).fill(org);
    await confirm.click();
    await page.getByRole('status').filter({ hasText: `Deleted organization ${org}.` }).waitFor();
    await page.getByRole('heading', { name: 'My organizations', level: 1 }).waitFor();
    expect((await demo.t.api(owner.username, 'GET', `/orgs/${org}`)).status).toBe(404);
    await context.close();
  });

  it('shows an org owner who has access: each permission with its owner and the team member holding it through a custom role', async () => {
    const owner = demo.manifest.owner.username;
    const org = `access-${Date.now().toString(36)}`;
    const editor = `editor-${Date.now().toString(36)}`;
    expect((await demo.t.api(owner, 'POST', '/orgs', { username: org })).status).toBe(201);
    const team = await demo.t.api(owner, 'POST', `/orgs/${org}/teams`, { name: 'editors', permission: 'read' });
    expect(team.status).toBe(201);
    await demo.t.signUp(editor);
    expect((await demo.t.api(owner, 'PUT', `/teams/${team.body.id}/members/${editor}`)).status).toBe(204);
    const role = await demo.t.api(owner, 'POST', `/authz/roles?org=${org}`, {
      name: 'Org editors',
      permissions: [{ namespace: 'org', action: 'edit' }],
      teamIDs: [team.body.id],
    });
    expect(role.status).toBe(201);

    const { context, page } = await web.newPage();
    await web.signIn(page, owner, demo.manifest.owner.password);
    await page.goto(`${base}/orgs/${org}`);
    await page.getByRole('link', { name: 'Who has access' }).click();
    // Named, not numbered: the organization by its name, each permission in the catalog's words with its name.
    await page.getByRole('heading', { name: `Who has access to the organization ${org}` }).waitFor();
    const table = page.getByRole('table', { name: new RegExp(`^Permissions on the organization ${org} `) });
    const edit = table.getByRole('row').filter({ has: page.getByRole('cell', { name: 'Edit the organization edit:org', exact: true }) });
    await edit.getByText(`${editor}: role Org editors through team editors`).waitFor();
    await edit.getByText(`${owner}: owner through team Owners`).waitFor();
    await web.shot(page, 'who-has-access');
    await context.close();

    // The member holding edit:org through the role may not look: the "no access" page, and nothing of the screen.
    const asEditor = await web.newPage();
    await web.signIn(asEditor.page, editor, `${editor}-password`);
    await asEditor.page.goto(`${base}/orgs/${org}/access`);
    const refused = asEditor.page.getByRole('region', { name: 'You don’t have access to this' });
    await refused.getByText(`This screen is for the owners of ${org} and site admins.`, { exact: false }).waitFor();
    expect(await asEditor.page.getByRole('form', { name: 'Show access to' }).count()).toBe(0);
    await asEditor.context.close();
  });

  it('offers a read-only member of an organization no Remove, where its owner has one', async () => {
    const owner = demo.manifest.owner.username;
    const org = `readers-${Date.now().toString(36)}`;
    const reader = `reader-${Date.now().toString(36)}`;
    expect((await demo.t.api(owner, 'POST', '/orgs', { username: org })).status).toBe(201);
    const team = await demo.t.api(owner, 'POST', `/orgs/${org}/teams`, { name: 'readers', permission: 'read' });
    expect(team.status).toBe(201);
    await demo.t.signUp(reader);
    expect((await demo.t.api(owner, 'PUT', `/teams/${team.body.id}/members/${reader}`)).status).toBe(204);

    const { context, page } = await web.newPage();
    await web.signIn(page, reader, `${reader}-password`);
    await page.goto(`${base}/orgs/${org}`);
    const members = page.getByRole('table', { name: `Members of ${org} (2)` });
    // Their own visibility is theirs to change: once it is offered, what the caller may do is known.
    await members.getByRole('button', { name: new RegExp(`^(Publicize|Conceal) ${reader}$`) }).waitFor();
    expect(await members.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Add a member' }).count()).toBe(0);
    // Only the screens a member may use: no bus tokens, service accounts or the owners' other screens.
    const tabs = page.getByRole('navigation', { name: `Organization ${org}` });
    await tabs.getByRole('link', { name: 'Contracts', exact: true }).waitFor();
    expect(await tabs.getByRole('link').allTextContents()).toEqual(['Members', 'Teams', 'Roles', 'Clusters', 'Contracts']);
    await context.close();

    const asOwner = await web.newPage();
    await web.signIn(asOwner.page, owner, demo.manifest.owner.password);
    await asOwner.page.goto(`${base}/orgs/${org}`);
    await asOwner.page.getByRole('button', { name: `Remove ${reader}` }).waitFor();
    await asOwner.context.close();
  });

  it('lets an owner add a member by picking them from the users found as the owner types', async () => {
    const owner = demo.manifest.owner;
    const org = `picker-${Date.now().toString(36)}`;
    const newcomer = `picked-${Date.now().toString(36)}`;
    expect((await demo.t.api(owner.username, 'POST', '/orgs', { username: org })).status).toBe(201);
    expect((await demo.t.api(owner.username, 'POST', `/orgs/${org}/teams`, { name: 'readers', permission: 'read' })).status).toBe(201);
    await demo.t.signUp(newcomer);

    const { context, page } = await web.newPage();
    await web.signIn(page, owner.username, owner.password);
    await page.goto(`${base}/orgs/${org}`);
    const form = page.getByRole('form', { name: 'Add a member' });
    // Part of the login: the picker asks the API and offers who matches.
    await form.getByRole('combobox', { name: 'Username' }).fill(newcomer.slice(0, -2));
    await form.getByRole('listbox').getByRole('option', { name: newcomer, exact: true }).click();
    expect(await form.getByRole('combobox', { name: 'Username' }).inputValue()).toBe(newcomer);
    await form.getByRole('combobox', { name: 'Team' }).selectOption({ label: 'readers' });
    await web.shot(page, 'add-member');
    await form.getByRole('button', { name: 'Add member' }).click();
    await form.getByRole('status').filter({ hasText: `Added ${newcomer} to readers.` }).waitFor();
    await page.getByRole('table', { name: `Members of ${org} (2)` }).getByRole('cell', { name: newcomer, exact: true }).waitFor();
    expect((await demo.t.api(owner.username, 'GET', `/orgs/${org}/members/${newcomer}`)).status).toBe(204);
    await context.close();
  });

  it('shows the demo org’s hub with its spokes, and its cluster sets', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, demo.manifest.owner.username, demo.manifest.owner.password);
    await page.goto(`${base}/orgs/demo/clusters`);
    const hub = demo.manifest.hub.name;
    await page
      .getByRole('table', { name: `Managed clusters of ${hub}` })
      .getByRole('cell', { name: demo.manifest.spokes[0].name, exact: true })
      .waitFor();
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
    const monthName = new Date(Date.UTC(Number(year), Number(month) - 1, 1)).toLocaleString('en-US', {
      month: 'long',
      year: 'numeric',
      timeZone: 'UTC',
    });
    await web.openAdminScreen(page, 'Billing');
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

  it("shows the demo organization's owner its usage: a chart per month by namespace with its table, and a namespace's objects", async () => {
    const { owner } = demo.manifest;
    const { year, month, product, cid, namespace } = demo.usage;
    const monthName = new Date(Date.UTC(Number(year), Number(month) - 1, 1)).toLocaleString('en-US', {
      month: 'long',
      year: 'numeric',
      timeZone: 'UTC',
    });
    const { context, page } = await web.newPage();
    await web.signIn(page, owner.username, owner.password);
    await page.goto(`${base}/orgs/${owner.org}`);
    await page.getByRole('navigation', { name: `Organization ${owner.org}` }).getByRole('link', { name: 'Usage', exact: true }).click();
    await page.getByRole('img', { name: `Usage of ${owner.org} by namespace, per month` }).waitFor();
    // The chart's numbers: the demo month has usage, and its total is in the last cell of its row.
    const monthly = page.getByRole('table', { name: `Monthly CPU core-hours of ${owner.org} by namespace` });
    const demoMonth = monthly.getByRole('row').filter({ has: page.getByRole('cell', { name: monthName, exact: true }) });
    expect(await demoMonth.getByRole('cell').last().textContent()).toMatch(/[1-9]/);
    await web.shot(page, 'org-usage');

    await page.locator(`a[href$="/usage/clusters/${cid}/namespaces/${namespace}"]`).click();
    await page.getByRole('img', { name: `Usage of ${namespace} by object, per month` }).waitFor();
    await page.getByRole('table', { name: `Objects of ${namespace}, all months` }).getByRole('cell', { name: product, exact: true }).first().waitFor();
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
    await page
      .getByRole('region', { name: 'You don’t have access to this' })
      .getByText('This screen is for site admins.', { exact: false })
      .waitFor();
    const refused = await demo.t.api(
      undefined,
      'GET',
      '/dashboard/summary/generated-months?org=demo',
      undefined,
      await web.sessionCookie(context),
    );
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
      await web.openAdminScreen(page, link);
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

  it('keeps the header, the site admin’s tabs and an organization’s tabs on one row each, 1,400 pixels wide', async () => {
    const { context, page } = await web.newPage(1400);
    await web.signIn(page, 'root', ROOT_PASSWORD);
    /** How far apart the vertical middles of what `items` finds are: a few pixels on one row, a row's height on two. */
    const spread = async (items: Locator) => {
      const middles = await Promise.all((await items.all()).map(async (i) => ((b) => (b ? b.y + b.height / 2 : NaN))(await i.boundingBox())));
      return Math.max(...middles) - Math.min(...middles);
    };
    const banner = page.getByRole('banner');
    expect(await spread(banner.getByRole('link').or(banner.getByRole('button')))).toBeLessThan(8);

    await page.goto(`${base}/orgs/demo`);
    const orgTabs = page.getByRole('navigation', { name: 'Organization demo' });
    await orgTabs.getByRole('link', { name: 'Notifications', exact: true }).waitFor();
    expect(await spread(orgTabs.getByRole('link'))).toBeLessThan(8);

    await web.openAdminScreen(page, 'Users');
    const adminTabs = page.getByRole('navigation', { name: 'Site admin screens' });
    expect(await adminTabs.getByRole('link').count()).toBe(11);
    expect(await spread(adminTabs.getByRole('link'))).toBeLessThan(8);
    expect(await spread(banner.getByRole('link').or(banner.getByRole('button')))).toBeLessThan(8);
    await web.shot(page, 'wide-admin');
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
