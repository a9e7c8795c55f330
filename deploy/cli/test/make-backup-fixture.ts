// Makes the backup fixture of this version: deploy/cli/test/fixtures/backups/<version>.age and <version>.json (what
// the upgrade drill expects to find in it). Run once per release, before the version is bumped, and commit both:
//   npx tsx --tsconfig tsconfig.base.json deploy/cli/test/make-backup-fixture.ts
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase } from '@platform/db';
import { FileObjectStorage } from '@platform/object-storage';
import { PLATFORM_VERSION } from '@platform/service-kit';
import { cli, issueTestLicense, TEST_CLUSTER } from './helpers';

export const FIXTURE_PASSPHRASE = 'platform backup fixture passphrase';
export const FIXTURE_CLUSTER = TEST_CLUSTER;

async function main(): Promise<void> {
  const dir = path.join(__dirname, 'fixtures', 'backups');
  const archive = path.join(dir, `${PLATFORM_VERSION}.age`);
  if (fs.existsSync(archive)) throw new Error(`${archive} exists: one fixture per release`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-fixture-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', PLATFORM_ADMIN_ORG: 'none', BACKUP_PASSPHRASE: FIXTURE_PASSPHRASE };
  const must = async (argv: string[]) => {
    const run = await cli(argv, env);
    if (run.code !== 0) throw new Error(`${argv[0]}: ${run.err}`);
    return run.out.trim();
  };
  await must(['migrate']);
  await must(['create-admin', '--username', 'fixture-admin', '--email', 'fixture@example.com', '--password', 'fixture-password-1']);
  const token = await must(['mint-token', 'fixture-admin', '--name', 'fixture']);
  const license = await issueTestLicense({ DATA_DIR: dataDir }, FIXTURE_CLUSTER, new Date('2099-01-01T00:00:00Z'));
  const db = await openDatabase({ dataDir, schema: 'contracts' });
  const { certificate_pem: caPem } = await db.table('license_authority').where({ id: 1 }).first('certificate_pem');
  await db.close();
  await new FileObjectStorage(path.join(dataDir, 'objects')).put('contracts/fixture/terms.pdf', Buffer.from('%PDF-1.4 fixture'), 'application/pdf');
  fs.mkdirSync(dir, { recursive: true });
  await must(['backup', archive]);
  const expected = { version: PLATFORM_VERSION, login: 'fixture-admin', token, caPem, licenses: [license] };
  fs.writeFileSync(path.join(dir, `${PLATFORM_VERSION}.json`), `${JSON.stringify(expected, null, 2)}\n`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.stderr.write(`wrote ${archive}\n`);
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
