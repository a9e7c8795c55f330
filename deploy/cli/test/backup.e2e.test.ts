import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as age from 'age-encryption';
import { trustedAuthority, verifyLicense } from '@platform/app-contracts-licensing/licensing';
import { FileObjectStorage } from '@platform/object-storage';
import { createTestDatabase, testNatsUrl } from '@platform/testing';
import { api, cli, cliProcess, issueTestLicense, startApps, TEST_CLUSTER, type Apps } from './helpers';
import { migratedDataDir } from './embedded-template';

const PASSPHRASE = 'a passphrase for the backup test';
const CLUSTER = TEST_CLUSTER;
const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/** Proves a restored platform: the token works, the CA is the one licenses were issued under, they verify, and the objects are there. */
async function expectRestored(platform: Apps, facts: { token: string; login: string; caPem: string; licenses: string[] }) {
  const user = await api(platform.url, 'GET', '/user', { token: facts.token });
  expect(user).toMatchObject({ status: 200, body: { login: facts.login } });
  const ca = await fetch(`${platform.url}/api/v1/licenses/ca`);
  expect(await ca.text()).toBe(facts.caPem);
  for (const license of facts.licenses) {
    await expect(verifyLicense(license, { clusterUID: CLUSTER }, trustedAuthority(facts.caPem))).resolves.toMatchObject({
      clusterUID: CLUSTER,
    });
  }
}

describe('backup and restore on the embedded database (DATA_DIR)', () => {
  const source = tmp('platform-backup-a-');
  const restored = tmp('platform-backup-b-');
  const archives = tmp('platform-backup-files-');
  const passFile = path.join(archives, 'pass');
  const base = { LOG_LEVEL: 'silent', PLATFORM_ADMIN_ORG: 'none', PLATFORM_ADMIN_PASSWORD: 'admin-password-1' };
  const a = { ...base, DATA_DIR: source };
  const b = { ...base, DATA_DIR: restored };
  const archive = path.join(archives, 'platform.age');
  let platform: Apps | undefined;
  const facts = { token: '', login: 'ops', caPem: '', licenses: [] as string[] };

  beforeAll(async () => {
    fs.writeFileSync(passFile, `${PASSPHRASE}\n`);
    // The source needs a migrated DATA_DIR, not the proof of migrating one (cli-embedded.e2e.test.ts): a copy of one.
    await migratedDataDir(source);
  });
  afterAll(async () => {
    await platform?.stop();
    for (const d of [source, restored, archives]) fs.rmSync(d, { recursive: true, force: true });
  });

  it('refuses while the platform runs on the DATA_DIR, saying why it must stop', async () => {
    expect((await cli(['migrate'], a)).code).toBe(0);
    // The user and its token, a license and an object: independent of each other, made side by side (one process,
    // one embedded database).
    await Promise.all([
      (async () => {
        expect((await cli(['create-admin', '--username', 'ops', '--email', 'ops@example.com'], a)).code).toBe(0);
        facts.token = (await cli(['mint-token', 'ops', '--name', 'backup-test'], a)).out.trim();
      })(),
      (async () => facts.licenses.push(await issueTestLicense(a)))(),
      new FileObjectStorage(path.join(source, 'objects')).put('contracts/c1/terms.pdf', Buffer.from('%PDF-1.4 terms'), 'application/pdf'),
    ]);
    platform = await startApps(['authz', 'orgs-teams', 'contracts-licensing', 'gateway'], a);
    facts.caPem = await (await fetch(`${platform.url}/api/v1/licenses/ca`)).text();
    expect(facts.caPem).toContain('BEGIN CERTIFICATE');

    const refused = await cliProcess(['backup', archive, '--passphrase-file', passFile], a);
    expect(refused.code).toBe(75);
    expect(refused.err).toMatch(
      /in use by a running platform \(pid \d+, .*a backup of the embedded database needs the platform stopped, because/,
    );
    expect(fs.existsSync(archive)).toBe(false);
    await platform.stop();
    platform = undefined;
  }, 180_000);

  it("backs up with the platform stopped: an encrypted archive whose manifest names the version and each schema's migrations", async () => {
    const run = await cli(['backup', archive, '--passphrase-file', passFile], a);
    expect(run).toMatchObject({ code: 0, out: `${archive}\n` });
    expect(run.err).toMatch(/^database: identity: \d+ tables, \d+ rows/m);
    expect(run.err).toContain('objects: 1 in');
    expect(fs.readFileSync(archive).subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
    expect(fs.readFileSync(archive).includes(Buffer.from('ops@example.com'))).toBe(false);

    const info = await cli(['backup-info', archive, '--passphrase-file', passFile], a);
    expect(info.code).toBe(0);
    const { manifest, summary } = JSON.parse(info.out);
    expect(manifest).toMatchObject({ format: 'platform-backup/1', database: { engine: 'embedded', format: 'rows' } });
    expect(manifest.database.schemas.contracts.migrations.length).toBeGreaterThan(0);
    expect(manifest.keys.files).toContain('secrets/encryption.key');
    expect(summary.objects).toBe(1);

    expect((await cli(['backup', archive, '--passphrase-file', passFile], a)).err).toContain('exists: choose a new file name');
  }, 120_000);

  it('a wrong passphrase restores nothing; the right one restores into an empty DATA_DIR and migrates; a second restore is refused', async () => {
    const wrong = await cli(['restore', archive, '--passphrase-stdin'], b, 'not the passphrase at all\n');
    // Marked first, then refused by the archive: the mark is taken away again, and the DATA_DIR is as it was (empty).
    expect(wrong).toMatchObject({
      code: 1,
      err:
        `marked DATA_DIR ${restored} as an unfinished restore: nothing starts on it until this restore completes\n` +
        `platform-cli: cannot open ${archive}: the passphrase is not the one it was made with\n`,
    });
    expect(fs.readdirSync(restored)).toEqual([]);

    const run = await cli(['restore', archive, '--passphrase-file', passFile], b);
    expect(run.code).toBe(0);
    expect(run.err).toContain('restored');
    expect(fs.readFileSync(path.join(restored, 'secrets/encryption.key'))).toEqual(
      fs.readFileSync(path.join(source, 'secrets/encryption.key')),
    );
    expect(fs.statSync(path.join(restored, 'secrets/encryption.key')).mode & 0o777).toBe(0o600);

    const again = await cli(['restore', archive, '--passphrase-file', passFile], b);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(
      /the target is not empty \(.*has tables in schema authz, .*\): restore into an empty DATA_DIR or database, or add --force/,
    );
    expect((await cli(['restore', archive, '--passphrase-file', passFile, '--force'], b)).code).toBe(0);
  }, 180_000);

  it('the restored platform has the data: the token works, the same CA, old licenses verify, new ones chain to it, the objects are there', async () => {
    platform = await startApps(['authz', 'orgs-teams', 'contracts-licensing', 'gateway'], b);
    await expectRestored(platform, facts);
    const fresh = await issueTestLicense(b);
    await expect(verifyLicense(fresh, { clusterUID: CLUSTER }, trustedAuthority(facts.caPem))).resolves.toBeTruthy();
    const object = await new FileObjectStorage(path.join(restored, 'objects')).get('contracts/c1/terms.pdf');
    expect(object).toEqual({ body: Buffer.from('%PDF-1.4 terms'), contentType: 'application/pdf' });
    await platform.stop();
    platform = undefined;
  }, 180_000);
});

describe('backup and restore on Postgres (DATABASE_URL), beside the running platform', () => {
  let source: { url: string; drop(): Promise<void> };
  const targets: { url: string; drop(): Promise<void> }[] = [];
  const archives = tmp('platform-backup-pg-');
  let env: Record<string, string>;
  let platform: Apps | undefined;
  const identityFile = path.join(archives, 'identity');
  let recipient = '';

  /** Each format's two empty databases to restore into, made with the source. */
  const empty: Record<string, { url: string; drop(): Promise<void> }[]> = {};
  /** Drops under way: a format's targets go as soon as its test is done with them. */
  const dropping: Promise<void>[] = [];

  beforeAll(async () => {
    const identity = await age.generateIdentity();
    recipient = await age.identityToRecipient(identity);
    fs.writeFileSync(identityFile, `${identity}\n`, { mode: 0o600 });
    const made = await Promise.all([createTestDatabase(), ...[0, 1, 2, 3].map(() => createTestDatabase())]);
    source = made[0];
    targets.push(...made.slice(1));
    empty.pg_dump = made.slice(1, 3);
    empty.rows = made.slice(3, 5);
    env = {
      DATABASE_URL: source.url,
      DATA_DIR: tmp('platform-backup-pg-data-'),
      NATS_URL: await testNatsUrl(),
      LOG_LEVEL: 'silent',
      PLATFORM_ADMIN_ORG: 'none',
      PLATFORM_ADMIN_PASSWORD: 'admin-password-1',
      SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      BACKUP_PASSPHRASE: PASSPHRASE,
    };
  });
  afterAll(async () => {
    await platform?.stop();
    // Dropped side by side: each DROP DATABASE waits for a checkpoint of the shared server, which they can share.
    await Promise.all([...dropping, source?.drop(), ...targets.map((t) => t.drop())]);
    fs.rmSync(archives, { recursive: true, force: true });
  });

  for (const format of ['pg_dump', 'rows']) {
    it(`${format}: taken while writes go on, it holds every write acknowledged before it began; restored, the platform works with the same CA`, async () => {
      if (!platform) {
        expect((await cli(['migrate'], env)).code).toBe(0);
        platform = await startApps(['authz', 'orgs-teams', 'contracts-licensing', 'gateway'], env);
      }
      const login = `ops-${format.replace('_', '')}`;
      // The user and its token, a license, the CA: independent of each other, made side by side.
      const [token, license, caPem] = await Promise.all([
        (async () => {
          expect((await cli(['create-admin', '--username', login, '--email', `${login}@example.com`], env)).code).toBe(0);
          return (await cli(['mint-token', login, '--name', 'backup-test'], env)).out.trim();
        })(),
        issueTestLicense(env),
        fetch(`${platform.url}/api/v1/licenses/ca`).then((res) => res.text()),
      ]);

      // Writes before the backup (acknowledged) and during it (in or out, never half).
      const acknowledged: string[] = [];
      const tag = format.replace('_', '');
      for (let i = 0; i < 5; i++) {
        const res = await api(platform.url, 'POST', '/orgs', { token, json: { username: `before-${tag}-${i}` } });
        expect(res.status).toBe(201);
        acknowledged.push(`before-${tag}-${i}`);
      }
      let writing = true;
      const during = (async () => {
        for (let i = 0; writing && i < 200; i++)
          await api(platform!.url, 'POST', '/orgs', { token, json: { username: `during-${tag}-${i}` } });
      })();
      const archive = path.join(archives, `${format}.age`);
      // pg_dump's archive is locked by BACKUP_PASSPHRASE, the rows' by a recipient key: each restore of a passphrase
      // archive costs seconds of scrypt, and the embedded section above plays the passphrase's other ways.
      const keyed = format === 'rows';
      const lock = keyed ? ['--recipient', recipient] : [];
      const key = keyed ? ['--identity', identityFile] : [];
      const e = keyed ? { ...env, BACKUP_PASSPHRASE: '' } : env;
      const run = await cli(['backup', archive, '--format', format, ...lock], e);
      writing = false;
      await during;
      expect(run.code).toBe(0);
      expect(run.err).toContain(format === 'pg_dump' ? 'database: pg_dump of authz, identity' : 'database: identity:');

      // Two restores of the one archive into empty databases of their own, side by side: the one the platform then
      // starts on, and one first refused for a wrong SECRETS_ENCRYPTION_KEY. Both write the same DATA_DIR files, so
      // the platform starts only when both are done.
      const [target, third] = empty[format];
      const into = { ...e, DATABASE_URL: target.url };
      const [restored] = await Promise.all([
        cli(['restore', archive, ...key], into),
        (async () => {
          // A wrong SECRETS_ENCRYPTION_KEY on the target is refused before anything is written.
          const refused = await cli(['restore', archive, ...key], {
            ...e,
            DATABASE_URL: third.url,
            SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
          });
          expect(refused.code).toBe(1);
          expect(refused.err).toContain('SECRETS_ENCRYPTION_KEY is not the key this archive');
          expect((await cli(['restore', archive, ...key], { ...e, DATABASE_URL: third.url })).code).toBe(0);
        })(),
      ]);
      expect(restored.code).toBe(0);

      const other = await startApps(['authz', 'orgs-teams', 'contracts-licensing', 'gateway'], into);
      try {
        await expectRestored(other, { token, login, caPem, licenses: [license] });
        for (const org of acknowledged) expect((await api(other.url, 'GET', `/orgs/${org}`, { token })).status).toBe(200);
      } finally {
        await other.stop();
      }
      for (const t of [target, third]) {
        targets.splice(targets.indexOf(t), 1);
        dropping.push(t.drop());
      }
    }, 240_000);
  }
});
