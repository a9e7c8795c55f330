import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startApp } from '@platform/service-kit';
import { templateDatabase } from '@platform/testing';
import { ALL } from '../src/platform';

const APPS_DIR = path.join(__dirname, '..', '..', '..', 'apps');

/** A hash of every app's migrations as they are on disk: a changed or added migration names another template. */
function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const app of fs.readdirSync(APPS_DIR).sort()) {
    const dir = path.join(APPS_DIR, app, 'migrations');
    if (!fs.existsSync(dir)) continue;
    for (const file of fs.readdirSync(dir).sort()) hash.update(`${app}/${file}\0`).update(fs.readFileSync(path.join(dir, file))).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * A database with every app's schema migrated, to copy each test platform's database from: a copy takes well under
 * a second, the platform's migrations several. Made once per migration set on the test server (each app started
 * with RUN_MIGRATIONS_ONLY, as the chart's migration Job does), then copied by every file that boots a platform. The
 * apps still apply whatever is pending at start, so a copy behaves as a fresh database the apps migrated themselves.
 */
export function platformTemplate(): Promise<string> {
  return templateDatabase(`tpl_platform_${migrationsHash()}`, async (url) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-template-'));
    try {
      for (const app of ALL) {
        const running = await startApp(app, {
          DATABASE_URL: url,
          DATA_DIR: dataDir,
          RUN_MIGRATIONS_ONLY: 'true',
          GRPC_PORT: '0',
          HTTP_PORT: '0',
          MARKETPLACE_HTTP_PORT: '0',
          LOG_LEVEL: 'silent',
        });
        await running.stop();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
