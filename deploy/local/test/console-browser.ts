import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserTestsRequired, chromiumPath, launchChromium, SCREENSHOTS, watchPage } from './browser';

/**
 * What the console's browser tests share: Debian's Chromium or a notice that they are skipped, a fresh browser
 * session per page whose console errors and CSP refusals are collected for the test to fail on, signing in the
 * way a person does, and a screenshot per screen under reports/console.
 */

const executablePath = chromiumPath();
if (!executablePath && browserTestsRequired())
  throw new Error('no Chromium for the browser tests: install Debian’s chromium or set CHROMIUM_PATH');
if (!executablePath) console.warn('console browser tests skipped: no Chromium (install Debian’s chromium or set CHROMIUM_PATH)');

/** `describe` where there is a Chromium, else `describe.skip`. */
export const describeInBrowser = executablePath ? describe : describe.skip;

/** Chromium, for a describe that `describeInBrowser` did not skip. */
export const launchConsoleChromium = () => launchChromium(executablePath!);

/** The console of the platform at `url`, in `browser`. */
export class ConsoleBrowser {
  /** What the pages logged that a user would not see as an error but a developer must; the tests expect none. */
  readonly problems: string[] = [];
  readonly base: string;
  /** The browser sessions opened and not closed yet: a test that failed half-way leaves its own open. */
  private readonly open = new Set<BrowserContext>();

  constructor(
    readonly browser: Browser,
    url: string,
  ) {
    this.base = url.replace(/\/$/, '');
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  }

  /** A fresh browser session (its own sessionStorage) at 1280 px unless told. */
  async newPage(width = 1280): Promise<{ context: BrowserContext; page: Page }> {
    const context = await this.browser.newContext({ viewport: { width, height: 900 }, acceptDownloads: true });
    this.open.add(context);
    context.on('close', () => this.open.delete(context));
    // Shorter than the test's own timeout, so a missing control is named in the failure.
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    const seen = watchPage(page);
    page.on('close', () => this.problems.push(...seen));
    return { context, page };
  }

  /**
   * For a test's `afterEach`: closes the sessions the test left open (it failed before closing them), so the next
   * test starts with none of its pages, then answers what the test's pages logged and forgets it.
   */
  async endTest(): Promise<string[]> {
    await Promise.allSettled([...this.open].map((context) => context.close()));
    return this.problems.splice(0);
  }

  async signIn(page: Page, username: string, password: string): Promise<void> {
    await page.goto(`${this.base}/`);
    await page.getByRole('textbox', { name: 'Username', exact: true }).fill(username);
    await page.getByRole('textbox', { name: 'Password', exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** A site admin's screen, the way a person opens it: **Site admin** in the header, then the screen's tab. */
  async openAdminScreen(page: Page, label: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Site admin', exact: true }).click();
    await page.getByRole('navigation', { name: 'Site admin screens' }).getByRole('link', { name: label, exact: true }).click();
  }

  /**
   * The console's session cookie as a `Cookie` header, for calling the API as that browser: HttpOnly, so page scripts
   * cannot read it; the browser's own cookie store can.
   */
  async sessionCookie(context: BrowserContext): Promise<{ cookie: string }> {
    const found = (await context.cookies()).find((c) => c.name === 'platform_session');
    if (!found) throw new Error('the browser holds no session cookie');
    expect(found).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/v1' });
    return { cookie: `platform_session=${found.value}` };
  }

  shot(page: Page, name: string): Promise<Buffer> {
    return page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  }
}

/** Waits until `check` holds, asking every 100 ms (page scripts cannot be evaluated under the console's CSP). */
export async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check()); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${check.toString()}`);
  }
}
