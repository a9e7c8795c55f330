import type { Browser } from 'playwright-core';
import { eventually } from '@platform/testing';
import { ConsoleBrowser, describeInBrowser, launchConsoleChromium } from './console-browser';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * A forgotten password in the web console, in a real browser: "Forgot password?" on the sign-in screen, the link of
 * the kept mail (no SMTP server is set) opened in the browser, a new password set there and signed in with.
 */
jest.setTimeout(90_000);

describeInBrowser('forgotten password in the web console', () => {
  let t: TestPlatform;
  let browser: Browser;
  let web: ConsoleBrowser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([bootTestPlatform({ PUBLIC_URL: 'https://platform.example/' }), launchConsoleChromium()]);
    web = new ConsoleBrowser(browser, t.platform.url);
    await t.signUp('nina');
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });
  afterEach(() => {
    expect(web.problems.splice(0)).toEqual([]);
  });

  it('asks for a link from the sign-in screen, opens it, sets a new password and signs in with it', async () => {
    const { context, page } = await web.newPage();
    await page.goto(`${web.base}/`);
    await page.getByRole('button', { name: 'Forgot password?' }).click();
    const form = page.getByRole('form', { name: 'Forgot password' });
    await form.getByRole('textbox', { name: /^Username or e-mail address/ }).fill('nina@example.com');
    await web.shot(page, 'forgot-password');
    await form.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('status').filter({ hasText: 'If an account exists for that name, we sent a link' }).waitFor();

    // The mail is kept for site admins; its link is on the configured public URL, so the browser opens it here.
    let text = '';
    await eventually(async () => {
      const mails = (await t.api('root', 'GET', '/admin/notifications/mails')).body as { recipient: string; text: string }[];
      text = mails.find((m) => m.recipient === 'nina@example.com')?.text ?? '';
      return text !== '';
    }, 15_000);
    const link = new URL(/https:\/\/\S+/.exec(text)![0]);
    expect(`${link.origin}${link.pathname}`).toBe('https://platform.example/reset-password');
    await page.goto(`${web.base}${link.pathname}${link.hash}`);

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
    await page.goto(`${web.base}${link.pathname}${link.hash}`);
    await page.getByRole('alert').filter({ hasText: 'This link is not valid any more' }).waitFor();
    await context.close();
  });
});
