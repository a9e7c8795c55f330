import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as age from 'age-encryption';
import { archiveName } from '../src/backup/destination';
import { migratedDataDir } from './embedded-template';
import { spawn } from 'node:child_process';
import { cli } from './helpers';
import { ACCESS_KEY, SECRET_KEY, startS3, type S3Bucket } from './s3-bucket';

const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));
const DAY = 86400_000;

/** `backup --to` a volume or a bucket, with retention, and restore from the bucket: what the chart's CronJob runs. */
describe('scheduled backups: backup --to a directory or an S3 bucket, retention, restore from the bucket', () => {
  const source = tmp('platform-backup-to-a-');
  const restored = tmp('platform-backup-to-b-');
  const volume = tmp('platform-backup-volume-');
  const keys = tmp('platform-backup-keys-');
  const identityFile = path.join(keys, 'identity');
  const base = { LOG_LEVEL: 'silent', PLATFORM_ADMIN_ORG: 'none', PLATFORM_ADMIN_PASSWORD: 'admin-password-1' };
  let recipient = '';
  let s3: S3Bucket;
  let bucketEnv: Record<string, string>;
  // A recipient key, as the chart's job should use: no scrypt per run, and the job holds nothing that opens an archive.
  const backupArgs = () => ['backup', '--recipient', recipient];
  const env = { ...base, DATA_DIR: source };

  beforeAll(async () => {
    const identity = await age.generateIdentity();
    recipient = await age.identityToRecipient(identity);
    fs.writeFileSync(identityFile, `${identity}\n`, { mode: 0o600 });
    // Pages of two keys: listing the bucket has to follow continuation tokens.
    s3 = await startS3(['backups'], { pageSize: 2 });
    bucketEnv = {
      ...env,
      BACKUP_S3_ENDPOINT: s3.url,
      BACKUP_S3_REGION: 'eu-test-1',
      BACKUP_S3_ACCESS_KEY_ID: ACCESS_KEY,
      BACKUP_S3_SECRET_ACCESS_KEY: SECRET_KEY,
    };
    // The source needs a migrated DATA_DIR, not the proof of migrating one (cli-embedded.e2e.test.ts): a copy of one.
    await migratedDataDir(source);
    expect((await cli(['migrate'], env)).code).toBe(0);
    expect((await cli(['create-admin', '--username', 'ops', '--email', 'ops@example.com'], env)).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await s3?.close();
    for (const d of [source, restored, volume, keys]) fs.rmSync(d, { recursive: true, force: true });
  });

  it('refuses wrong combinations before doing anything', async () => {
    expect(await cli([...backupArgs(), path.join(volume, 'x.age'), '--to', volume], env)).toMatchObject({
      code: 64,
      err: 'platform-cli: give either a file or --to, not both\n',
    });
    expect((await cli([...backupArgs()], env)).err).toContain('name the archive to write, or give --to');
    expect((await cli([...backupArgs(), path.join(volume, 'x.age'), '--keep', '3'], env)).err).toContain(
      '--keep and --keep-days apply to --to',
    );
    expect(await cli([...backupArgs(), '--to', volume, '--keep', '0'], env)).toMatchObject({
      code: 64,
      err: 'platform-cli: --keep 0: a whole number of at least 1\n',
    });
    expect((await cli([...backupArgs(), '--to', path.join(volume, 'missing')], env)).code).toBe(66);
    expect((await cli([...backupArgs(), '--to', 's3://Not_A_Bucket/x'], env)).err).toContain('is not an S3 bucket name');
    expect(fs.readdirSync(volume)).toEqual([]);
  });

  it('into a volume: names each archive by its time, keeps the newest N, and never touches other files', async () => {
    const old = archiveName(new Date(Date.now() - 40 * DAY));
    fs.writeFileSync(path.join(volume, old), 'an old archive');
    fs.writeFileSync(path.join(volume, 'notes.txt'), 'not an archive');
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const run = await cli([...backupArgs(), '--to', volume, '--keep', '2'], env);
      expect(run.code).toBe(0);
      made.push(run.out.trim());
      expect(made[i]).toMatch(new RegExp(`^${volume}/platform-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.\\d{3}Z\\.age$`));
      expect(fs.readFileSync(made[i]).subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
    }
    expect(fs.readdirSync(volume).sort()).toEqual(['notes.txt', path.basename(made[1]), path.basename(made[2])].sort());

    // By age: what is older than the days given goes, whatever the count.
    fs.writeFileSync(path.join(volume, old), 'an old archive');
    const run = await cli([...backupArgs(), '--to', volume, '--keep-days', '30'], env);
    expect(run.err).toContain(`retention: deleted 1 older archive(s) from ${volume}: ${old}`);
    expect(fs.readdirSync(volume)).toHaveLength(4);
  }, 120_000);

  it('a backup killed midway leaves a partial archive, which the next scheduled run removes, saying so', async () => {
    const killedVolume = tmp('platform-backup-killed-');
    try {
      // A passphrase makes the archive's key with scrypt (seconds): the partial file is there all that while.
      const child = spawn(process.execPath, [path.join(__dirname, '../cli.mjs'), 'backup', '--to', killedVolume], {
        env: { PATH: process.env.PATH ?? '', ...env, BACKUP_PASSPHRASE: 'a passphrase for this test' },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const started = Date.now();
      while (!fs.readdirSync(killedVolume).some((f) => f.endsWith('.partial'))) {
        if (Date.now() - started > 60_000) throw new Error('the backup wrote no partial archive within 60 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      child.kill('SIGKILL');
      await exited;
      const [left] = fs.readdirSync(killedVolume);
      expect(left).toMatch(/^platform-.*\.age\..+-\d+\.partial$/);

      // A partial another host is writing is left alone (its writer cannot be checked from here).
      const foreign = `${archiveName(new Date())}.elsewhere-1.partial`;
      fs.writeFileSync(path.join(killedVolume, foreign), 'being written on another host');
      const run = await cli([...backupArgs(), '--to', killedVolume, '--keep', '2'], env);
      expect(run.code).toBe(0);
      expect(run.err).toContain(`removed 1 unfinished archive(s) an interrupted backup left in ${killedVolume}: ${left}`);
      expect(fs.readdirSync(killedVolume).sort()).toEqual([path.basename(run.out.trim()), foreign].sort());
    } finally {
      fs.rmSync(killedVolume, { recursive: true, force: true });
    }
  }, 120_000);

  it('into a bucket: uploads under the prefix, keeps the newest N there, and restores the newest from it', async () => {
    const objects = s3.buckets.get('backups')!;
    const older = [40, 20, 10].map((days) => `nightly/${archiveName(new Date(Date.now() - days * DAY))}`);
    for (const key of older) objects.set(key, { body: Buffer.from('older'), contentType: 'application/octet-stream' });
    objects.set('nightly/README', { body: Buffer.from('kept'), contentType: 'text/plain' });
    objects.set('nightly/weekly/' + archiveName(new Date(Date.now() - 90 * DAY)), { body: Buffer.from('elsewhere'), contentType: 'x/y' });
    objects.set('other/' + archiveName(new Date(Date.now() - 90 * DAY)), { body: Buffer.from('elsewhere'), contentType: 'x/y' });

    const run = await cli([...backupArgs(), '--to', 's3://backups/nightly/', '--keep', '2'], bucketEnv);
    expect(run.code).toBe(0);
    const stored = run.out.trim();
    expect(stored).toMatch(/^s3:\/\/backups\/nightly\/platform-.*Z\.age$/);
    const key = stored.slice('s3://backups/'.length);
    expect(objects.get(key)!.body.subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
    expect(run.err).toContain(
      `retention: deleted 2 older archive(s) from s3://backups/nightly: ${path.basename(older[0])}, ${path.basename(older[1])}`,
    );
    expect([...objects.keys()].sort()).toEqual(
      [
        key,
        older[2],
        'nightly/README',
        ...[...objects.keys()].filter((k) => k.startsWith('nightly/weekly/') || k.startsWith('other/')),
      ].sort(),
    );
    // Nothing is left in the scratch directory.
    const scratch = fs.readdirSync(os.tmpdir()).filter((d) => /^platform-backup-[A-Za-z0-9]{6}$/.test(d));
    expect(scratch.filter((d) => fs.readdirSync(path.join(os.tmpdir(), d)).some((f) => f.startsWith('platform-')))).toEqual([]);

    const info = await cli(['backup-info', 's3://backups/nightly/', '--identity', identityFile], bucketEnv);
    expect(info.code).toBe(0);
    expect(info.err).toContain(`downloading ${stored}`);
    expect(JSON.parse(info.out)).toMatchObject({ complete: true, manifest: { database: { engine: 'embedded' } } });

    const target = { ...bucketEnv, DATA_DIR: restored };
    const restore = await cli(['restore', stored, '--identity', identityFile], target);
    expect(restore.code).toBe(0);
    expect(restore.err).toContain('restored');
    // The restored DATA_DIR has the user the archive was made with.
    expect((await cli(['mint-token', 'ops', '--name', 'after-restore'], target)).out.trim()).toMatch(/^[0-9a-f]{40}$/);
  }, 120_000);

  it('fails with the bucket’s answer when it refuses the upload, deleting nothing', async () => {
    const objects = s3.buckets.get('backups')!;
    const before = [...objects.keys()].sort();
    const run = await cli([...backupArgs(), '--to', 's3://backups/nightly', '--keep', '1'], {
      ...bucketEnv,
      BACKUP_S3_ACCESS_KEY_ID: 'AKIDWRONG',
    });
    expect(run.code).toBe(69);
    expect(run.err).toMatch(/^platform-cli: cannot upload the archive to s3:\/\/backups\/nightly: AccessDenied \(HTTP 403\)/m);
    expect([...objects.keys()].sort()).toEqual(before);

    const untouched = tmp('platform-backup-to-c-');
    const missing = await cli(['restore', 's3://backups/nightly/platform-2020-01-01T00-00-00.000Z.age', '--identity', identityFile], {
      ...bucketEnv,
      DATA_DIR: untouched,
    });
    expect(missing).toMatchObject({ code: 66, err: expect.stringContaining('does not exist') });
    // The target was marked before the download: the failed restore took its mark away again, leaving it as it was.
    expect(missing.err).toContain('marked DATA_DIR');
    expect(fs.readdirSync(untouched)).toEqual([]);
    fs.rmSync(untouched, { recursive: true, force: true });
  }, 60_000);
});
