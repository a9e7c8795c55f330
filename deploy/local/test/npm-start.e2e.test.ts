import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, eventually, testNatsUrl } from '@platform/testing';
import { startPlatform, type LocalPlatform } from '../src/platform';
import { interrupt, npmStart } from './launcher';

describe('npm start: the whole platform on embedded defaults', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-e2e-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('serves the API and the frontend, bootstraps a site admin, stops on Ctrl-C, and keeps its data across restarts', async () => {
    const hosted = await npmStart({ DATA_DIR: dataDir, DEPLOYMENT_TYPE: 'Hosted', PLATFORM_ADMIN_USERNAME: 'siteadmin' });
    let token = '';
    try {
      const version = await fetch(`${hosted.url}api/v1/version`);
      expect(version.status).toBe(200);
      expect(await version.json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
      const market = await fetch(`${hosted.url}marketplace/api/v1/version`);
      expect(market.status).toBe(200);
      expect(market.headers.get('content-type')).toMatch(/^text\/html/);

      // A new user reads the generated password from the console and makes a token with it.
      const password = /generated password: (\S+)/.exec(hosted.logs())![1];
      const basic = `Basic ${Buffer.from(`siteadmin:${password}`).toString('base64')}`;
      const created = await fetch(`${hosted.url}api/v1/users/siteadmin/tokens`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'first' }),
      });
      expect(created.status).toBe(201);
      token = ((await created.json()) as { sha1: string }).sha1;
      const me = await fetch(`${hosted.url}api/v1/user`, { headers: { authorization: `token ${token}` } });
      expect(await me.json()).toMatchObject({ login: 'siteadmin', is_admin: true });
      // On the embedded database too, removing a domain that is not whitelisted is 400 (a delete's row count).
      const absent = await fetch(`${hosted.url}api/v1/allowed-domains?org=platform-admin`, {
        method: 'PATCH',
        headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'not-whitelisted.example.com' }),
      });
      expect(absent.status).toBe(400);
    } finally {
      expect(await interrupt(hosted.child)).toBe(0);
    }
    expect(hosted.logs()).toMatch(/"applied":[1-9]/);

    // A password set now, on data from an earlier start, is not applied, and the start says so instead of keeping quiet.
    const market = await npmStart({
      DATA_DIR: dataDir,
      DEPLOYMENT_TYPE: 'ProviderBMarketplace',
      PLATFORM_ADMIN_USERNAME: 'siteadmin',
      PLATFORM_ADMIN_PASSWORD: 'set-too-late-password',
    });
    try {
      const res = await fetch(`${market.url}marketplace/api/v1/version`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
      // Same DATA_DIR: the admin and its token are still there, and no new password is printed.
      const me = await fetch(`${market.url}api/v1/user?token=${token}`);
      expect(me.status).toBe(200);
      expect(market.logs()).not.toMatch(/generated password/);
      expect(market.logs()).toContain('PLATFORM_ADMIN_PASSWORD was not applied: site admin "siteadmin" exists from an earlier start');
      const basic = `Basic ${Buffer.from('siteadmin:set-too-late-password').toString('base64')}`;
      expect((await fetch(`${market.url}api/v1/user`, { headers: { authorization: basic } })).status).toBe(401);
    } finally {
      expect(await interrupt(market.child)).toBe(0);
    }
    // Every schema was already migrated, so nothing is applied again.
    expect(market.logs()).not.toMatch(/"applied":[1-9]/);
    expect(market.logs()).toMatch(/"applied":0/);
  }, 120_000);

  it('stops with a message naming a bad setting', async () => {
    await expect(npmStart({ DATA_DIR: dataDir, DEPLOYMENT_TYPE: 'Cloudy' })).rejects.toThrow(/exited with 78[\s\S]*DEPLOYMENT_TYPE/);
  });
});

describe('the platform with real Postgres and NATS, one app down', () => {
  let platform: LocalPlatform;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    platform = await startPlatform({
      DATABASE_URL: db.url,
      NATS_URL: await testNatsUrl(),
      HTTP_PORT: '0',
      DEPLOYMENT_TYPE: 'ProviderBMarketplace',
      LOG_LEVEL: 'silent',
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'platform-e2e-')),
    });
  });
  afterAll(async () => {
    await platform?.stop();
    await drop?.();
  });

  it('answers 503 only on the down app’s routes and recovers by itself when it returns', async () => {
    expect((await fetch(`${platform.url}api/v1/version`)).status).toBe(200);
    await platform.stopApp('orgs-teams');

    const down = await fetch(`${platform.url}api/v1/version`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ message: 'orgs-teams is unavailable', url: expect.any(String) });
    expect((await fetch(`${platform.url}marketplace/api/v1/version`)).status).toBe(200);

    await platform.startApp('orgs-teams');
    await eventually(async () => (await fetch(`${platform.url}api/v1/version`)).status === 200, 10_000, 200);
  });
});
