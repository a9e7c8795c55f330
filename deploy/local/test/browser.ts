import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * The system's Chromium (Debian's `chromium` package; browsers cannot be downloaded here), or CHROMIUM_PATH.
 * `.ci/run` installs it when missing; a developer machine without it skips the browser tests with a notice,
 * unless CI or CONSOLE_BROWSER_TESTS=required says they must run.
 */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
  return candidates.find((p): p is string => !!p && fs.existsSync(p));
}

export const browserTestsRequired = () => process.env.CI === 'true' || process.env.CONSOLE_BROWSER_TESTS === 'required';

/** Headless Chromium as the probe of this machine runs it: no sandbox (root), no background networking. */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Where screenshots go for review: reports/console (beside the jest results). */
export const SCREENSHOTS = path.join(__dirname, '..', '..', '..', 'reports', 'console');

/** What went wrong on a page that a user would not see as an error but a developer must: console errors, CSP refusals, failed scripts. */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/Failed to load resource: the server responded with a status of (4\d\d)/.test(msg.text())) {
      problems.push(`console: ${msg.text()}`);
    }
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  return problems;
}
