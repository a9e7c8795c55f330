import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as age from 'age-encryption';
import { trustedAuthority, verifyLicense } from '@platform/app-contracts-licensing/licensing';
import { FileObjectStorage } from '@platform/object-storage';
import { createTestDatabase, testNatsUrl } from '@platform/testing';
import { api, cli, issueTestLicense, startApps, TEST_CLUSTER } from './helpers';
import { migratedDataDir } from './embedded-template';

// A restore either completes or leaves a target that says it is unfinished (docs/backup.md, "An interrupted
// restore"): killed with SIGKILL at several points, the target is refused by the apps and the CLI, naming the
// interrupted restore and `restore <archive> --resume`, which then brings the whole archive back.

const CLUSTER = TEST_CLUSTER;
const APPS = ['authz', 'orgs-teams', 'contracts-licensing', 'gateway'];
const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/** Runs `npm run cli`'s entry as its own process and SIGKILLs it once its stderr matches `at`. */
function killedAt(argv: string[], env: Record<string, string>, at: RegExp): Promise<{ signal: string | null; code: number | null; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, '../cli.mjs'), ...argv], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      if (at.test(err)) child.kill('SIGKILL');
    });
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, err }));
  });
}

/** `npm start`'s launcher (deploy/local/start.mjs) on `env`: its exit code and output, once it ends. */
function launch(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, '../../local/start.mjs')], {
      env: { PATH: process.env.PATH ?? '', ...env, HTTP_PORT: '0', LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

/** What the source holds, and what a restored target must serve. */
interface Facts {
  token: string;
  login: string;
  caPem: string;
  license: string;
}

/** Makes the source's facts (a user and token, a license, the CA) and backs it up into `archive`. */
async function makeArchive(env: Record<string, string>, archive: string, recipient: string, login: string): Promise<Facts> {
  expect((await cli(['migrate'], env)).code).toBe(0);
  expect((await cli(['create-admin', '--username', login, '--email', `${login}@example.com`], env)).code).toBe(0);
  const token = (await cli(['mint-token', login, '--name', 'restore-test'], env)).out.trim();
  const license = await issueTestLicense(env);
  const platform = await startApps(['authz', 'orgs-teams', 'contracts-licensing', 'gateway'], env);
  let caPem: string;
  try {
    caPem = await (await fetch(`${platform.url}/api/v1/licenses/ca`)).text();
  } finally {
    await platform.stop();
  }
  const run = await cli(['backup', archive, '--format', 'rows', '--recipient', recipient], env);
  expect(run.code).toBe(0);
  return { token, login, caPem, license };
}

/**
 * The target refuses to start (the apps, the CLI and, with `launcher`, `npm start`: exit 78), naming the restore and
 * the command that resumes it.
 */
async function expectRefused(env: Record<string, string>, archive: string, launcher = false): Promise<void> {
  const message = new RegExp(`holds an unfinished restore: \`restore ${escape(archive)}\` .* run \`cli restore ${escape(archive)} --resume\``);
  if (launcher) {
    const started = await launch(env);
    expect(started.code).toBe(78);
    expect(started.out).toMatch(message);
  }
  await expect(startApps(['authz'], env)).rejects.toThrow(message);
  const admin = await cli(['create-admin', '--username', 'someone', '--email', 'someone@example.com'], env);
  expect(admin.code).toBe(78);
  expect(admin.err).toMatch(message);
  const migrate = await cli(['migrate'], env);
  expect(migrate.code).toBe(78);
}

/** A resume that fails (here: another key) leaves the target marked, whatever it held. */
async function expectFailedResumeKeepsMark(env: Record<string, string>, archive: string, otherIdentityFile: string): Promise<void> {
  const failed = await cli(['restore', archive, '--identity', otherIdentityFile, '--resume'], env);
  expect(failed.code).not.toBe(0);
  expect(failed.err).not.toContain('restored');
  await expect(startApps(['authz'], env)).rejects.toThrow('holds an unfinished restore');
}

async function expectRestored(env: Record<string, string>, facts: Facts): Promise<void> {
  const platform = await startApps(APPS, env);
  try {
    expect(await api(platform.url, 'GET', '/user', { token: facts.token })).toMatchObject({ status: 200, body: { login: facts.login } });
    expect(await (await fetch(`${platform.url}/api/v1/licenses/ca`)).text()).toBe(facts.caPem);
    await expect(verifyLicense(facts.license, { clusterUID: CLUSTER }, trustedAuthority(facts.caPem))).resolves.toMatchObject({
      clusterUID: CLUSTER,
    });
  } finally {
    await platform.stop();
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Points to kill a restore at: its progress lines (each then has more to do), from its first write on. */
const POINTS: [string, RegExp][] = [
  ['it has only marked the target', /^marked /m],
  ['its schemas are being made', /^archive of /m],
  ['its objects and files are being written', /^database: \d+ schemas/m],
];

describe('an interrupted restore on the embedded database (DATA_DIR)', () => {
  const dir = tmp('platform-restore-kill-');
  const source = path.join(dir, 'source');
  const archive = path.join(dir, 'platform.age');
  const identityFile = path.join(dir, 'identity');
  const otherIdentityFile = path.join(dir, 'other-identity');
  const base = { LOG_LEVEL: 'silent', PLATFORM_ADMIN_ORG: 'none', PLATFORM_ADMIN_PASSWORD: 'admin-password-1' };
  let facts: Facts;

  beforeAll(async () => {
    const identity = await age.generateIdentity();
    fs.writeFileSync(identityFile, `${identity}\n`, { mode: 0o600 });
    fs.writeFileSync(otherIdentityFile, `${await age.generateIdentity()}\n`, { mode: 0o600 });
    await migratedDataDir(source);
    await new FileObjectStorage(path.join(source, 'objects')).put('contracts/c1/terms.pdf', Buffer.from('%PDF-1.4'), 'application/pdf');
    facts = await makeArchive({ ...base, DATA_DIR: source }, archive, await age.identityToRecipient(identity), 'ops');
  }, 240_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  [...POINTS, ['it migrates forward', /^migrating to /m] as [string, RegExp]].forEach(([what, at], i) => {
    it(`killed when ${what}: start refused with the message; --resume restores it all`, async () => {
      const target = path.join(dir, `target-${i}`);
      const env = { ...base, DATA_DIR: target };
      const killed = await killedAt(['restore', archive, '--identity', identityFile], env, at);
      expect(killed).toMatchObject({ signal: 'SIGKILL' });
      expect(killed.err).not.toContain('restored');
      expect(fs.existsSync(path.join(target, 'RESTORE-UNFINISHED.json'))).toBe(true);
      // Everything is restored beside DATA_DIR first: until the switch DATA_DIR holds the mark (and the lock) only.
      expect(fs.readdirSync(target).filter((n) => n !== 'lock')).toEqual(['RESTORE-UNFINISHED.json']);

      await expectRefused(env, archive, i === 0);
      // No empty database was made by the refused starts.
      expect(fs.existsSync(path.join(target, 'postgres'))).toBe(false);
      const again = await cli(['restore', archive, '--identity', identityFile], env);
      expect(again.code).toBe(78);
      expect(again.err).toContain('--resume');
      await expectFailedResumeKeepsMark(env, archive, otherIdentityFile);

      const resumed = await cli(['restore', archive, '--identity', identityFile, '--resume'], env);
      expect(resumed.err).toContain('going over the unfinished restore of');
      expect(resumed.code).toBe(0);
      expect(fs.existsSync(path.join(target, 'RESTORE-UNFINISHED.json'))).toBe(false);
      expect(fs.existsSync(`${target}.restoring`)).toBe(false);
      expect(await new FileObjectStorage(path.join(target, 'objects')).get('contracts/c1/terms.pdf')).toMatchObject({
        body: Buffer.from('%PDF-1.4'),
      });
      await expectRestored(env, facts);
    }, 240_000);
  });

  it('a failed restore into a new DATA_DIR leaves nothing behind: no directory, no database, no lock', async () => {
    const cut = path.join(dir, 'cut.age');
    const whole = fs.readFileSync(archive);
    fs.writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.9)));
    const target = path.join(dir, 'new-data-dir');
    const run = await cli(['restore', cut, '--identity', identityFile], { ...base, DATA_DIR: target });
    expect(run.code).toBe(65);
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.existsSync(`${target}.restoring`)).toBe(false);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('new-data-dir'))).toEqual([]);
  }, 120_000);

  it('a failed --force restore over a restored DATA_DIR leaves it as it was', async () => {
    // Restored by the resume after the kill while its schemas were being made.
    const target = path.join(dir, 'target-1');
    const run = await cli(['restore', path.join(dir, 'cut.age'), '--identity', identityFile, '--force'], { ...base, DATA_DIR: target });
    expect(run.code).toBe(65);
    expect(fs.existsSync(path.join(target, 'RESTORE-UNFINISHED.json'))).toBe(false);
    await expectRestored({ ...base, DATA_DIR: target }, facts);
  }, 120_000);
});

describe('an interrupted restore on Postgres (DATABASE_URL)', () => {
  const dir = tmp('platform-restore-kill-pg-');
  const archive = path.join(dir, 'platform.age');
  const identityFile = path.join(dir, 'identity');
  const otherIdentityFile = path.join(dir, 'other-identity');
  const databases: { url: string; drop(): Promise<void> }[] = [];
  let base: Record<string, string>;
  let facts: Facts;

  beforeAll(async () => {
    const identity = await age.generateIdentity();
    fs.writeFileSync(identityFile, `${identity}\n`, { mode: 0o600 });
    fs.writeFileSync(otherIdentityFile, `${await age.generateIdentity()}\n`, { mode: 0o600 });
    databases.push(...(await Promise.all(Array.from({ length: POINTS.length + 1 }, () => createTestDatabase()))));
    base = {
      NATS_URL: await testNatsUrl(),
      LOG_LEVEL: 'silent',
      PLATFORM_ADMIN_ORG: 'none',
      PLATFORM_ADMIN_PASSWORD: 'admin-password-1',
      SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
    };
    const source = { ...base, DATABASE_URL: databases[0].url, DATA_DIR: path.join(dir, 'source') };
    facts = await makeArchive(source, archive, await age.identityToRecipient(identity), 'ops-pg');
  }, 240_000);
  afterAll(async () => {
    await Promise.all(databases.map((d) => d.drop()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  POINTS.forEach(([what, at], i) => {
    it(`killed when ${what}: start refused with the message; --resume restores it all`, async () => {
      const env = { ...base, DATABASE_URL: databases[i + 1].url, DATA_DIR: path.join(dir, `data-${i}`) };
      const killed = await killedAt(['restore', archive, '--identity', identityFile], env, at);
      expect(killed).toMatchObject({ signal: 'SIGKILL' });
      expect(killed.err).not.toContain('restored');

      await expectRefused(env, archive, i === 0);
      const again = await cli(['restore', archive, '--identity', identityFile], env);
      expect(again.code).toBe(78);
      await expectFailedResumeKeepsMark(env, archive, otherIdentityFile);

      const resumed = await cli(['restore', archive, '--identity', identityFile, '--resume'], env);
      expect(resumed.code).toBe(0);
      await expectRestored(env, facts);
      // A restore of the restored target is refused as not empty, as before: the marker is gone.
      expect((await cli(['restore', archive, '--identity', identityFile], env)).err).toContain('the target is not empty');
    }, 240_000);
  });
});
