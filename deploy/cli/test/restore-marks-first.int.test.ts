import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { eventually } from '@platform/testing';
import { runCli } from '../src/cli';
import { ACCESS_KEY, SECRET_KEY, startS3 } from './s3-bucket';

// A restore's first write is its mark (docs/backup.md, "An interrupted restore"): before it downloads or reads the
// archive and before it loads any app's code, which took seconds, so a restore killed in that time left an unmarked
// target that started as a brand-new platform.

/** The marker file of the target, once the test names it; whether it existed each time the apps' code was loaded. */
let mockMarker = '';
const mockMarkedAtAppsLoad: boolean[] = [];
jest.mock('../src/apps', () => {
  if (mockMarker) mockMarkedAtAppsLoad.push(jest.requireActual<typeof fs>('node:fs').existsSync(mockMarker));
  return jest.requireActual('../src/apps');
});

// The fixture's passphrase, from a registry of its own: in this file's, only the restore may load the apps.
let passphrase = '';
jest.isolateModules(() => {
  passphrase = (jest.requireActual('./make-backup-fixture') as { FIXTURE_PASSPHRASE: string }).FIXTURE_PASSPHRASE;
});

describe('a restore marks its target before anything else', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-restore-first-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('before it downloads the archive or loads any app; the mark goes once it completes', async () => {
    let release = () => {};
    const downloadHeld = new Promise<void>((resolve) => (release = resolve));
    const s3 = await startS3(['backups'], { beforeGet: () => downloadHeld });
    const fixture = fs.readFileSync(path.join(__dirname, 'fixtures/backups/0.1.0.age'));
    s3.buckets.get('backups')!.set('platform.age', { body: fixture, contentType: 'application/octet-stream' });
    const target = path.join(dir, 'target');
    mockMarker = path.join(target, 'RESTORE-UNFINISHED.json');
    let err = '';
    const restoring = runCli(['restore', 's3://backups/platform.age', '--passphrase-stdin'], {
      env: {
        DATA_DIR: target,
        LOG_LEVEL: 'silent',
        BACKUP_S3_ENDPOINT: s3.url,
        BACKUP_S3_REGION: 'eu-test-1',
        BACKUP_S3_ACCESS_KEY_ID: ACCESS_KEY,
        BACKUP_S3_SECRET_ACCESS_KEY: SECRET_KEY,
      },
      out: () => {},
      err: (s) => void (err += s),
      readStdin: async () => `${passphrase}\n`,
    });
    try {
      // The download has begun and waits: the target is marked already, and no app's code is loaded yet.
      await eventually(async () => s3.requests.some((r) => r.method === 'GET' && new URL(r.url, s3.url).pathname === '/backups/platform.age'), 60_000);
      expect(fs.existsSync(mockMarker)).toBe(true);
      expect(err).toMatch(/^marked DATA_DIR .* as an unfinished restore: nothing starts on it until this restore completes$/m);
      expect(mockMarkedAtAppsLoad).toEqual([]);
    } finally {
      release();
    }
    expect(await restoring).toBe(0);
    expect(mockMarkedAtAppsLoad).toEqual([true]);
    expect(fs.existsSync(mockMarker)).toBe(false);
    await s3.close();
  }, 120_000);
});
