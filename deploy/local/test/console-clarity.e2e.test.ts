import type { Browser } from 'playwright-core';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { ConsoleBrowser, describeInBrowser, launchConsoleChromium, until } from './console-browser';

/**
 * The console saying plainly what is so, in a real browser on the platform with the demo data: the demo's contract
 * over its quota shows its quota used up, as the platform measured it and as its audit trail says; who has access
 * names the organization, its clusters and each permission in the catalog's words; a plain member opening an owner's
 * screen gets one "no access" page; a new error replaces an old success; the role form groups the catalog by what a
 * person manages and starts from a preset; and the API reference shows its operations without a script. Each screen
 * is saved under reports/console (docs/console.md shows them).
 */
jest.setTimeout(90_000);

describeInBrowser('the console, saying plainly what is so', () => {
  let demo: DemoPlatform;
  let browser: Browser;
  let web: ConsoleBrowser;
  const stamp = Date.now().toString(36);

  beforeAll(async () => {
    [demo, browser] = await Promise.all([
      // A short sweep, so the used-up quota's notice is in the contract's audit trail soon.
      bootDemoPlatform({ NOTICE_SWEEP_INTERVAL_MS: '300' }),
      launchConsoleChromium(),
    ]);
    web = new ConsoleBrowser(browser, demo.t.platform.url);
  }, 240_000);
  // Chromium and the demo platform stop side by side; on a loaded machine that has taken over a minute and a half.
  afterAll(async () => {
    await Promise.all([browser?.close(), demo?.stop()]);
  }, 240_000);
  afterEach(() => {
    expect(web.problems.splice(0)).toEqual([]);
  });

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
