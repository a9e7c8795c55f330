import * as fs from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { eventually } from '@platform/testing';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { ConsoleBrowser, describeInBrowser, launchConsoleChromium, until } from './console-browser';
import { basic, ROOT_PASSWORD } from './harness';

/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against the platform with the
 * demo data and billing on, as `DEMO_SEED_MANIFEST=... BILLING_ENABLED=true npm start` runs it: the demo owner
 * and the site admin sign in and use their screens the way a person would, by role and name. Every screen is
 * saved as a screenshot under reports/console for review; no screen may log an error or a CSP refusal.
 *
 * One platform and one Chromium for every area, each a describe of its own: signing in, organizations, clusters,
 * usage and the admin screens; the site admin's users, all-organizations and audit screens; service accounts;
 * notifications; a forgotten password; the console saying plainly what is so. Each area makes its own users, organizations and names, so what one leaves
 * behind is not what another counts. Single sign-on needs a platform whose password sign-in is only for the
 * break-glass account, so it has a file of its own (console-sso.e2e.test.ts).
 */
jest.setTimeout(90_000);

/** A valid one-pixel PNG, the smallest avatar there is. */
const ONE_PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describeInBrowser('the web console in a browser', () => {
  let demo: DemoPlatform;
  let browser: Browser;
  let web: ConsoleBrowser;
  let base: string;

  beforeAll(async () => {
    [demo, browser] = await Promise.all([
      bootDemoPlatform({
        // A low account limit, so the admin's lockout is reached in a few tries. The only other wrong password is
        // the demo owner's one, on the sign-in screen: below the limit, and the owner signs in after it.
        LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
        // The notifications' endpoints are on loopback; a short sweep so the kept mail is there at once. Nothing
        // else looks at webhooks or notice mails.
        WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
        NOTICE_SWEEP_INTERVAL_MS: '300',
      }),
      launchConsoleChromium(),
    ]);
    web = new ConsoleBrowser(browser, demo.t.platform.url);
    base = web.base;
  }, 240_000);
  // Chromium and the demo platform stop side by side, each whatever the other does; on a loaded machine that has
  // taken over a minute and a half.
  afterAll(async () => {
    const stopped = await Promise.allSettled([browser?.close(), demo?.stop()]);
    const failed = stopped.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  }, 240_000);
  // The pages a failed test left open are closed first, so the next test starts with none of them.
  afterEach(async () => {
    expect((await web?.endTest()) ?? []).toEqual([]);
  });

  // First: its account-page test counts the demo owner's browser sessions, which the later areas leave open.
  describe('signing in, organizations, clusters, usage and the admin screens', () => {
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
      await page
        .getByRole('navigation', { name: `Organization ${org}` })
        .getByRole('link', { name: 'Settings', exact: true })
        .click();

      const options = page.getByRole('form', { name: 'Organization options' });
      await options.getByRole('textbox', { name: 'Full name', exact: true }).fill('Settings Test Inc');
      await options.getByRole('textbox', { name: 'Description', exact: true }).fill('Edited in the browser');
      await options.getByRole('textbox', { name: 'Website', exact: true }).fill('https://settings.example');
      await options.getByRole('textbox', { name: 'Location', exact: true }).fill('Lisbon');
      await options.getByRole('combobox', { name: 'Visibility' }).selectOption('limited');
      await options.getByRole('button', { name: 'Save options' }).click();
      await options
        .getByRole('status')
        .filter({ hasText: `Saved the options of ${org}.` })
        .waitFor();
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
      await upload
        .getByRole('status')
        .filter({ hasText: `The avatar of ${org} is the new image.` })
        .waitFor();
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
      await page
        .getByRole('status')
        .filter({ hasText: `Deleted organization ${org}.` })
        .waitFor();
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
      await form
        .getByRole('status')
        .filter({ hasText: `Added ${newcomer} to readers.` })
        .waitFor();
      await page
        .getByRole('table', { name: `Members of ${org} (2)` })
        .getByRole('cell', { name: newcomer, exact: true })
        .waitFor();
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
      await page
        .getByRole('navigation', { name: `Organization ${owner.org}` })
        .getByRole('link', { name: 'Usage', exact: true })
        .click();
      await page.getByRole('img', { name: `Usage of ${owner.org} by namespace, per month` }).waitFor();
      // The chart's numbers: the demo month has usage, and its total is in the last cell of its row.
      const monthly = page.getByRole('table', { name: `Monthly CPU core-hours of ${owner.org} by namespace` });
      const demoMonth = monthly.getByRole('row').filter({ has: page.getByRole('cell', { name: monthName, exact: true }) });
      expect(await demoMonth.getByRole('cell').last().textContent()).toMatch(/[1-9]/);
      await web.shot(page, 'org-usage');

      await page.locator(`a[href$="/usage/clusters/${cid}/namespaces/${namespace}"]`).click();
      await page.getByRole('img', { name: `Usage of ${namespace} by object, per month` }).waitFor();
      await page
        .getByRole('table', { name: `Objects of ${namespace}, all months` })
        .getByRole('cell', { name: product, exact: true })
        .first()
        .waitFor();
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
        const middles = await Promise.all(
          (await items.all()).map(async (i) => ((b) => (b ? b.y + b.height / 2 : NaN))(await i.boundingBox())),
        );
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

  /**
   * The site admin finds a user and deactivates them (their token is refused on the very next call), lifts a sign-in
   * lockout (their password works again), deletes a user who alone owns an organization after confirming that the
   * organization goes too, browses every organization, and filters the audit trail down to what was just done. The
   * API is asked each time whether it agrees.
   */
  describe('the site admin’s user, organization and audit screens', () => {
    /** A REST call as a user's token, as their client would make it. */
    const asToken = (token: string, path: string) => demo.t.api(undefined, 'GET', path, undefined, { authorization: `token ${token}` });

    beforeAll(async () => {
      for (const login of ['ellen', 'frank', 'gina']) await demo.t.signUp(login);
      expect((await demo.t.api('gina', 'POST', '/orgs', { username: 'gina-co' })).status).toBe(201);
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
      expect(await page.getByRole('form', { name: 'Edit user root' }).getByRole('checkbox', { name: 'Site admin' }).isDisabled()).toBe(
        true,
      );
      await page.getByRole('form', { name: 'Edit user root' }).getByRole('button', { name: 'Close' }).click();
      await context.close();
    });

    it('lifts a sign-in lockout, shown only on the locked user', async () => {
      const signIn = (password: string) =>
        demo.t.api(undefined, 'GET', '/users/frank/tokens', undefined, { authorization: basic('frank', password) });
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

  /**
   * The demo organization's owner makes a service account holding a custom role, mints its token (the secret shown
   * once, and it works over REST), sees it listed and revokes it, edits, deactivates and deletes the account; the
   * site admin makes a site-wide one that is a site admin. The API is asked each time whether it agrees.
   */
  describe('service accounts', () => {
    let role: { id: number; name: string };
    const owner = () => demo.manifest.owner;
    /** A REST call presenting a service account's token, as another team's service would. */
    const asAccount = (token: string, path: string) => demo.t.api(undefined, 'GET', path, undefined, { authorization: `Bearer ${token}` });

    beforeAll(async () => {
      const made = await demo.t.api(owner().username, 'POST', `/authz/roles?org=${owner().org}`, {
        name: 'Team creators',
        description: 'Create teams',
        permissions: [{ namespace: 'team', action: 'create' }],
      });
      expect(made.status).toBe(201);
      role = made.body;
    });

    /** The organization's service accounts screen, through its tab. */
    async function openOrgAccounts(page: Page) {
      await page.goto(`${web.base}/orgs/${owner().org}`);
      await page
        .getByRole('navigation', { name: `Organization ${owner().org}` })
        .getByRole('link', { name: 'Service accounts' })
        .click();
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
        expect.objectContaining({
          name: 'site-auditor',
          org: null,
          roles: [],
          site_admin: true,
          kubernetes_subjects: ['ops/auditor'],
          active: true,
        }),
      ]);

      await list.getByRole('link', { name: 'site-auditor', exact: true }).click();
      const secret = await mintToken(page, 'audit');
      expect((await asAccount(secret, '/admin/audit-events')).status).toBe(200);
      await context.close();
    });
  });

  /**
   * No SMTP server is set: a site admin registers a webhook endpoint (its signing secret shown once), disables it,
   * and finds the mail the demo's used-up quota contract sent its recipient, kept because no SMTP server is set; the
   * demo organization's owner finds its own endpoints on the organization's Notifications tab. The API is asked
   * each time.
   */
  describe('the notifications screens', () => {
    it('registers a site webhook showing its secret once, disables it, and shows the kept mails', async () => {
      const { context, page } = await web.newPage();
      await web.signIn(page, 'root', ROOT_PASSWORD);
      await web.openAdminScreen(page, 'Notifications');
      await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();

      const form = page.getByRole('form', { name: 'Register webhook endpoint' });
      await form.getByRole('textbox', { name: /^URL/ }).fill('https://127.0.0.1:9443/platform');
      await form.getByRole('button', { name: 'Register endpoint' }).click();
      const secret = page.getByRole('region', { name: 'Signing secret of https://127.0.0.1:9443/platform' });
      const value = await secret.getByRole('textbox', { name: 'Signing secret' }).inputValue();
      expect(value).toMatch(/^whsec_/);
      const listed = await demo.t.api('root', 'GET', '/admin/notifications/webhooks');
      expect(listed.body.map((e: { url: string; enabled: boolean }) => [e.url, e.enabled])).toEqual([
        ['https://127.0.0.1:9443/platform', true],
      ]);
      expect(JSON.stringify(listed.body)).not.toContain(value);
      await web.shot(page, 'notifications-secret');
      await secret.getByRole('button', { name: 'I have copied it' }).click();
      await secret.waitFor({ state: 'detached' });

      await page.getByRole('button', { name: 'Disable https://127.0.0.1:9443/platform' }).click();
      await page.getByRole('button', { name: 'Enable https://127.0.0.1:9443/platform' }).waitFor();
      expect((await demo.t.api('root', 'GET', '/admin/notifications/webhooks')).body[0].enabled).toBe(false);

      const mails = page.getByRole('table', { name: /^Notice mails, newest first/ });
      // The demo's used-up quota contract told its recipient, the demo owner: kept, as no SMTP server is set.
      const owner = `${demo.manifest.owner.username}@example.com`;
      await mails.getByText(owner).first().waitFor();
      const row = mails.getByRole('row').filter({ hasText: owner }).filter({ hasText: 'has used 100%' });
      expect(await row.textContent()).toContain('Kept (no SMTP)');
      await web.shot(page, 'notifications');
      await context.close();
    });

    it("shows an organization's owner its endpoints on the organization's tab, and registers one there", async () => {
      const { context, page } = await web.newPage();
      await web.signIn(page, demo.manifest.owner.username, demo.manifest.owner.password);
      await page.goto(`${demo.t.platform.url}orgs/demo`);
      await page.getByRole('navigation', { name: 'Organization demo' }).getByRole('link', { name: 'Notifications' }).click();
      const form = page.getByRole('form', { name: 'Register webhook endpoint' });
      await form.getByRole('textbox', { name: /^URL/ }).fill('https://127.0.0.1:9443/demo');
      await form.getByRole('checkbox', { name: /Contract ending/ }).uncheck();
      await form.getByRole('button', { name: 'Register endpoint' }).click();
      await page.getByRole('table', { name: 'Webhook endpoints of demo (1)' }).waitFor();
      const mine = await demo.t.api(demo.manifest.owner.username, 'GET', '/orgs/demo/notifications/webhooks');
      expect(mine.body.map((e: { url: string; events: string[] }) => [e.url, e.events])).toEqual([
        ['https://127.0.0.1:9443/demo', ['quota.threshold']],
      ]);
      // The site's endpoints are not the organization's.
      expect(mine.body.map((e: { url: string }) => e.url)).not.toContain('https://127.0.0.1:9443/platform');
      await context.close();
    });
  });

  /**
   * "Forgot password?" on the sign-in screen, the link of the kept mail (no SMTP server is set) opened in the
   * browser, a new password set there and signed in with.
   */
  describe('a forgotten password', () => {
    /**
     * The platform as the browser names it here: 127.0.0.1, where its public URL (PUBLIC_URL unset: this machine's
     * address of the gateway) says localhost, so a link built on the request's Host would show.
     */
    let asked: string;

    beforeAll(async () => {
      asked = base.replace('//localhost:', '//127.0.0.1:');
      expect(asked).not.toBe(base);
      await demo.t.signUp('nina');
    });

    it('asks for a link from the sign-in screen, opens it, sets a new password and signs in with it', async () => {
      const { context, page } = await web.newPage();
      await page.goto(`${asked}/`);
      await page.getByRole('button', { name: 'Forgot password?' }).click();
      const form = page.getByRole('form', { name: 'Forgot password' });
      await form.getByRole('textbox', { name: /^Username or e-mail address/ }).fill('nina@example.com');
      await web.shot(page, 'forgot-password');
      await form.getByRole('button', { name: 'Send the link' }).click();
      await page.getByRole('status').filter({ hasText: 'If an account exists for that name, we sent a link' }).waitFor();

      // The mail is kept for site admins; its link is on the platform's public URL (localhost), not on the Host the
      // browser named (127.0.0.1), and the browser opens it where it asked.
      let text = '';
      await eventually(async () => {
        const mails = (await demo.t.api('root', 'GET', '/admin/notifications/mails')).body as { recipient: string; text: string }[];
        text = mails.find((m) => m.recipient === 'nina@example.com')?.text ?? '';
        return text !== '';
      }, 15_000);
      const link = new URL(/https?:\/\/\S+/.exec(text)![0]);
      expect(`${link.origin}${link.pathname}`).toBe(`${demo.t.platform.url}reset-password`);
      expect(link.origin).not.toBe(new URL(asked).origin);
      await page.goto(`${asked}${link.pathname}${link.hash}`);

      await page.getByText('Choose a new password for nina.').waitFor();
      // The code is taken out of the address bar once read.
      expect(new URL(page.url()).hash).toBe('');
      const reset = page.getByRole('form', { name: 'Set a new password' });
      await reset.getByLabel(/^New password/).fill('nina-new-password');
      await reset.getByLabel(/^Repeat the new password/).fill('nina-new-password');
      await web.shot(page, 'reset-password');
      await reset.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('status').filter({ hasText: 'Your new password is set.' }).waitFor();

      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByRole('textbox', { name: 'Username', exact: true }).fill('nina');
      await page.getByRole('textbox', { name: 'Password', exact: true }).fill('nina-new-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();

      // The link works once: opened again, it offers a new one.
      await page.goto(`${asked}${link.pathname}${link.hash}`);
      await page.getByRole('alert').filter({ hasText: 'This link is not valid any more' }).waitFor();
      await context.close();
    });
  });

  /**
   * The console saying plainly what is so: the demo's contract over its quota shows its quota used up, as the platform
   * measured it and as its audit trail says; who has access names the organization, its clusters and each permission in
   * the catalog's words; a plain member opening an owner's screen gets one "no access" page; a new error replaces an old
   * success; the role form groups the catalog by what a person manages and starts from a preset; and the API reference
   * shows its operations without a script. Last: it adds a role and an organization to the demo owner's.
   */
  describe('saying plainly what is so', () => {
    const stamp = Date.now().toString(36);

    it('shows the contract over its quota used up, as the platform measured it and its audit trail says', async () => {
      const { owner, quotaExceeded } = demo.manifest;
      const id = quotaExceeded!.contractID;
      // The quota's notice, which the audit trail shows, is recorded by the sweep; no license was ever issued.
      await until(async () =>
        ((await demo.t.api(owner.username, 'GET', `/user/contracts/${id}/audit?org=demo`)).body as { event: string }[]).some((e) =>
          e.event.startsWith('quota-notice: 100% of 1 object-hours'),
        ),
      );
      const usage = await demo.t.api(owner.username, 'GET', `/user/contracts/${id}/quota-usage?org=demo`);
      expect(usage.status).toBe(200);
      expect(usage.body).toMatchObject({ enabled: true, metric: 'object-hours', limit: 1 });
      expect(usage.body.used).toBeGreaterThanOrEqual(1);

      const { context, page } = await web.newPage();
      await web.signIn(page, owner.username, owner.password);
      await page.goto(`${web.base}/orgs/demo/contracts/${id}`);
      const gauge = page.getByRole('meter', { name: 'Quota used (Object-hours)' });
      await gauge.waitFor();
      expect(Number(await gauge.getAttribute('value'))).toBeGreaterThanOrEqual(1);
      await page.getByText('The quota is used up.', { exact: false }).waitFor();
      expect(await page.getByText('Not measured yet', { exact: false }).count()).toBe(0);
      await page
        .getByRole('table', { name: `Audit trail of contract ${id}` })
        .getByText('quota-notice: 100% of 1 object-hours', { exact: false })
        .waitFor();
      await page.getByRole('heading', { name: 'Quota', exact: true }).scrollIntoViewIfNeeded();
      await web.shot(page, 'contract-quota');
      await context.close();
    });

    it('names the organization, its clusters and each permission on who has access', async () => {
      const { owner, hub } = demo.manifest;
      const { context, page } = await web.newPage();
      await web.signIn(page, owner.username, owner.password);
      await page.goto(`${web.base}/orgs/demo/access`);
      await page.getByRole('heading', { name: 'Who has access to the organization demo' }).waitFor();
      const table = page.getByRole('table', { name: /^Permissions on the organization demo / });
      await table.getByRole('cell', { name: 'Edit the organization edit:org', exact: true }).waitFor();
      // A relation a custom role grants is named as its permission: view_role is "View custom roles", view:role.
      await table.getByRole('cell', { name: 'View custom roles view:role', exact: true }).waitFor();
      expect(await page.getByText(/organization:\d+/).count()).toBe(0);
      const form = page.getByRole('form', { name: 'Show access to' });
      await form.getByRole('combobox', { name: 'Object' }).selectOption({ label: `Cluster ${hub.name} (hub)` });
      await form.getByRole('button', { name: 'Show' }).click();
      await page.getByRole('heading', { name: `Who has access to cluster ${hub.name} (hub)` }).waitFor();
      await page
        .getByRole('cell', { name: 'Manage the cluster: its cluster sets, feature sets and namespaces manage', exact: true })
        .waitFor();
      await web.shot(page, 'who-has-access-cluster');
      await context.close();
    });

    it('shows a plain member who opens an owner’s screen one "no access" page, and nothing of the screen', async () => {
      const { owner } = demo.manifest;
      const member = `member-${stamp}`;
      await demo.t.signUp(member);
      const team = await demo.t.api(owner.username, 'POST', '/orgs/demo/teams', { name: `readers-${stamp}`, permission: 'read' });
      expect(team.status).toBe(201);
      expect((await demo.t.api(owner.username, 'PUT', `/teams/${team.body.id}/members/${member}`)).status).toBe(204);

      const { context, page } = await web.newPage();
      await web.signIn(page, member, `${member}-password`);
      await page.goto(`${web.base}/orgs/demo/usage`);
      const refused = page.getByRole('region', { name: 'You don’t have access to this' });
      await refused.getByText('This screen is for the owners of demo and site admins.', { exact: false }).waitFor();
      await refused.getByRole('link', { name: 'Back to demo' }).waitFor();
      expect(await page.getByRole('group', { name: 'Usage shown' }).count()).toBe(0);
      expect(await page.getByText('(403)', { exact: false }).count()).toBe(0);
      await web.shot(page, 'no-access');
      // The way back leads to a screen the member may see.
      await refused.getByRole('link', { name: 'Back to demo' }).click();
      await page.getByRole('navigation', { name: 'Organization demo' }).getByRole('link', { name: 'Members', exact: true }).waitFor();
      await context.close();
    });

    it('replaces an old success with the new error when creating an organization', async () => {
      const { owner } = demo.manifest;
      const org = `messages-${stamp}`;
      const { context, page } = await web.newPage();
      await web.signIn(page, owner.username, owner.password);
      const form = page.getByRole('form', { name: 'Create organization' });
      await form.getByRole('textbox', { name: 'Organization name' }).fill(org);
      await form.getByRole('button', { name: 'Create organization' }).click();
      await form
        .getByRole('status')
        .filter({ hasText: `Created organization ${org}` })
        .waitFor();
      // The same name again: the API refuses it, and only that is said.
      await form.getByRole('textbox', { name: 'Organization name' }).fill(org);
      await form.getByRole('button', { name: 'Create organization' }).click();
      await form.getByRole('alert').waitFor();
      expect(await form.getByRole('status').count()).toBe(0);
      expect(await page.getByRole('link', { name: `Open ${org}` }).count()).toBe(0);
      await form.scrollIntoViewIfNeeded();
      await web.shot(page, 'create-org-refused');
      await context.close();
    });

    it('groups the role form by what a person manages and starts a role from a preset', async () => {
      const { owner } = demo.manifest;
      const { context, page } = await web.newPage();
      await web.signIn(page, owner.username, owner.password);
      await page.goto(`${web.base}/orgs/demo/roles`);
      const form = page.getByRole('form', { name: 'Create role' });
      for (const group of ['Members', 'Teams', 'Roles', 'Clusters', 'Contracts and licenses', 'Tokens', 'Organization profile'])
        await form.getByRole('group', { name: group, exact: true }).waitFor();
      await form.getByRole('textbox', { name: 'Role name' }).fill(`Editors ${stamp}`);
      await form.getByRole('group', { name: 'Start from a preset' }).getByRole('button', { name: 'Editor' }).click();
      expect(await form.getByRole('checkbox', { name: /\(create:cluster\)/ }).isChecked()).toBe(true);
      expect(await form.getByRole('checkbox', { name: /\(add:team-member\)/ }).isChecked()).toBe(false);
      await page.getByRole('heading', { name: 'Create role', level: 2 }).scrollIntoViewIfNeeded();
      await web.shot(page, 'role-form');
      await form.getByRole('button', { name: 'Create role' }).click();
      await form
        .getByRole('status')
        .filter({ hasText: `Created role Editors ${stamp}.` })
        .waitFor();
      const roles = (await demo.t.api(owner.username, 'GET', '/authz/roles?org=demo')).body as {
        name: string;
        permissions: { namespace: string; action: string }[];
      }[];
      const made = roles.find((r) => r.name === `Editors ${stamp}`)!;
      expect(made.permissions.map((p) => `${p.action}:${p.namespace}`)).toEqual(
        expect.arrayContaining(['edit:org', 'create:cluster', 'view:team']),
      );
      await context.close();
    });

    it('shows the API reference’s operations at once, without a script, each opening to who may call it', async () => {
      const { context, page } = await web.newPage();
      await page.goto(`${web.base}/api/v1/docs/`);
      const contracts = page.locator('section#tag-contracts');
      await contracts.getByRole('heading', { name: 'Contracts', level: 2 }).waitFor();
      const get = contracts.locator('details#contractGet');
      await get.locator('summary').click();
      await get.getByText('Requires: view_contracts:site_admin on the site').waitFor();
      await get.getByRole('link', { name: 'Contract', exact: true }).click();
      await page.locator('#schema-contract').getByRole('cell', { name: 'quota required', exact: true }).waitFor();
      expect(page.url()).toMatch(/#schema-contract$/);
      expect(await page.locator('script').count()).toBe(0);
      await get.scrollIntoViewIfNeeded();
      await web.shot(page, 'api-reference');
      await context.close();
    });
  });
});
