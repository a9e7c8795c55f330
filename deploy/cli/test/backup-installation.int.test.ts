import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as age from 'age-encryption';
import { openDatabase } from '@platform/db';
import { installationOf, INSTALLATION_SCHEMA, readInstallation, type Installation } from '@platform/service-kit';
import { createTestDatabase } from '@platform/testing';
import { migratedDataDir } from './embedded-template';
import { cli } from './helpers';
import { FIXTURE_PASSPHRASE } from './make-backup-fixture';

const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));
const base = { LOG_LEVEL: 'silent', PLATFORM_ADMIN_ORG: 'none', PLATFORM_ADMIN_PASSWORD: 'admin-password-1' };

/** The installation a target's database keeps, read as it is (undefined: none yet, the first start makes one). */
async function installationIn(env: { DATABASE_URL?: string; DATA_DIR: string }): Promise<Installation | undefined> {
  const db = await openDatabase({ url: env.DATABASE_URL, dataDir: env.DATA_DIR, schema: INSTALLATION_SCHEMA, resultCacheEntries: 0 });
  try {
    return await readInstallation(db.knex);
  } finally {
    await db.close();
  }
}

/** The installation every app of the target reads at start (made there if it keeps none). */
const installationAtStart = (env: Record<string, string>) => installationOf({ DATABASE_URL: env.DATABASE_URL, DATA_DIR: env.DATA_DIR });

/**
 * The installation (its id and its namespace on NATS, which its enrolled clusters publish in) goes into the archive
 * and comes back with a restore, so a platform restored after a disaster keeps hearing its clusters; a copy restored
 * beside the original with --new-installation gets names of its own.
 */
describe('a backup carries the installation, and a restore keeps it or makes a new one', () => {
  const keys = tmp('platform-installation-keys-');
  const identityFile = path.join(keys, 'identity');
  let recipient = '';

  beforeAll(async () => {
    const identity = await age.generateIdentity();
    recipient = await age.identityToRecipient(identity);
    fs.writeFileSync(identityFile, `${identity}\n`, { mode: 0o600 });
  });
  afterAll(() => fs.rmSync(keys, { recursive: true, force: true }));

  const backup = async (env: Record<string, string>, archive: string, flags: string[] = []) =>
    expect(await cli(['backup', archive, '--recipient', recipient, ...flags], env)).toMatchObject({ code: 0 });
  /** Restores `archive` into `env`'s target; answers what it said on stderr. */
  const restore = async (env: Record<string, string>, archive: string, flags: string[] = []) => {
    const run = await cli(['restore', archive, '--identity', identityFile, ...flags], env);
    expect(run).toMatchObject({ code: 0 });
    return run.err;
  };

  it('embedded: the restored DATA_DIR keeps the id and namespace; --new-installation gives it others', async () => {
    const dirs = [tmp('platform-installation-a-'), tmp('platform-installation-b-'), tmp('platform-installation-c-')];
    const [source, kept, copy] = dirs.map((d) => ({ ...base, DATA_DIR: d }));
    const archive = path.join(keys, 'embedded.age');
    try {
      await migratedDataDir(source.DATA_DIR);
      const original = await installationAtStart(source);
      expect(original.busNamespace).toMatch(/^platform-[0-9a-f]{12}$/);

      await backup(source, archive);
      expect(await restore(kept, archive)).toContain(
        `installation ${original.id}: namespace ${original.busNamespace} on NATS (the archive's)`,
      );
      expect(await installationIn(kept)).toEqual(original);
      // What every app reads at start: the archive's, not a new one.
      expect(await installationAtStart(kept)).toEqual(original);

      const said = await restore(copy, archive, ['--new-installation']);
      const fresh = (await installationIn(copy))!;
      expect(said).toContain(`installation ${fresh.id}: namespace ${fresh.busNamespace} on NATS (a new one)`);
      expect(fresh.id).not.toBe(original.id);
      expect(fresh.busNamespace).not.toBe(original.busNamespace);
      expect(fresh.busNamespace).toMatch(/^platform-[0-9a-f]{12}$/);
    } finally {
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    }
  }, 120_000);

  it('Postgres, rows and pg_dump: the restored database keeps the id and namespace; --new-installation over it (--force) replaces them', async () => {
    const databases = await Promise.all([createTestDatabase(), createTestDatabase(), createTestDatabase()]);
    const dataDir = tmp('platform-installation-pg-');
    const [source, ...targets] = databases.map((d) => ({ ...base, DATABASE_URL: d.url, DATA_DIR: dataDir }));
    try {
      expect((await cli(['migrate'], source)).code).toBe(0);
      const original = await installationAtStart(source);
      for (const [i, format] of ['rows', 'pg_dump'].entries()) {
        const target = targets[i];
        const archive = path.join(dataDir, `${format}.age`);
        await backup(source, archive, ['--format', format]);
        await restore(target, archive);
        expect(await installationIn(target)).toEqual(original);
        expect(await installationAtStart(target)).toEqual(original);

        await restore(target, archive, ['--new-installation', '--force']);
        const fresh = (await installationIn(target))!;
        expect(fresh.id).not.toBe(original.id);
        expect(fresh.busNamespace).not.toBe(original.busNamespace);
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
      await Promise.all(databases.map((d) => d.drop()));
    }
  }, 120_000);

  it('an archive made before archives kept the installation restores as before: the first start makes a new one', async () => {
    const fixtures = path.join(__dirname, 'fixtures', 'backups');
    const target = { ...base, DATA_DIR: tmp('platform-installation-old-') };
    try {
      const run = await cli(['restore', path.join(fixtures, '0.1.0.age'), '--passphrase-stdin'], target, `${FIXTURE_PASSPHRASE}\n`);
      expect(run).toMatchObject({ code: 0 });
      expect(run.err).toContain('installation: none in the archive (made before archives kept it)');
      expect(await installationIn(target)).toBeUndefined();
      expect((await installationAtStart(target)).busNamespace).toMatch(/^platform-[0-9a-f]{12}$/);
    } finally {
      fs.rmSync(target.DATA_DIR, { recursive: true, force: true });
    }
  }, 120_000);
});
