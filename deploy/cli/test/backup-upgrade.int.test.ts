import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { trustedAuthority, verifyLicense } from '@platform/app-contracts-licensing/licensing';
import { FileObjectStorage } from '@platform/object-storage';
import { api, cli, startApps } from './helpers';
import { FIXTURE_CLUSTER, FIXTURE_PASSPHRASE } from './make-backup-fixture';

/**
 * The upgrade drill: every release's backup fixture (fixtures/backups/<version>.age, one added per release by
 * make-backup-fixture.ts) restores into this version, migrates forward and serves what it held.
 */
const dir = path.join(__dirname, 'fixtures', 'backups');
const fixtures = fs.readdirSync(dir).filter((f) => f.endsWith('.age'));

describe('each release\'s backup restores into this version', () => {
  it('there is at least one fixture', () => expect(fixtures.length).toBeGreaterThan(0));

  for (const fixture of fixtures) {
    it(`${fixture}: restored into an empty DATA_DIR, migrated, the token works, the CA is the same and its licenses verify`, async () => {
      const expected = JSON.parse(fs.readFileSync(path.join(dir, fixture.replace(/\.age$/, '.json')), 'utf8'));
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-upgrade-'));
      const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', PLATFORM_ADMIN_ORG: 'none', PLATFORM_ADMIN_PASSWORD: 'not-used-admin-1' };
      try {
        const run = await cli(['restore', path.join(dir, fixture), '--passphrase-stdin'], env, `${FIXTURE_PASSPHRASE}\n`);
        expect(run.err).toContain(`archive of ${expected.version}`);
        expect(run.code).toBe(0);
        const platform = await startApps(['authz', 'orgs-teams', 'contracts-licensing', 'gateway'], env);
        try {
          expect(await api(platform.url, 'GET', '/user', { token: expected.token })).toMatchObject({ status: 200, body: { login: expected.login } });
          expect(await (await fetch(`${platform.url}/api/v1/licenses/ca`)).text()).toBe(expected.caPem);
          for (const license of expected.licenses) {
            await expect(verifyLicense(license, { clusterUID: FIXTURE_CLUSTER }, trustedAuthority(expected.caPem))).resolves.toBeTruthy();
          }
        } finally {
          await platform.stop();
        }
        expect(await new FileObjectStorage(path.join(dataDir, 'objects')).get('contracts/fixture/terms.pdf')).toEqual({
          body: Buffer.from('%PDF-1.4 fixture'),
          contentType: 'application/pdf',
        });
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }, 180_000);
  }
});
