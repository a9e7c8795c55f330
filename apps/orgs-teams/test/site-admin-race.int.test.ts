import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { orgsTeamsV1 } from '@platform/proto';
import { createClient, startApp, type RunningService } from '@platform/service-kit';
import { createTestDatabase, testNatsUrl } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

// Two replicas of orgs-teams started at once on a fresh database (as the chart does after its migration Job):
// both bootstrap the site admin and the administrative organization, and both must start.
describe('the site-admin bootstrap of two replicas at once', () => {
  let authz: AuthzStub;
  let drop = async () => {};
  const running: RunningService[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'orgs-teams-race-'));
  afterAll(async () => {
    for (const r of running) await r.stop();
    await authz?.server.shutdown(100);
    await drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts both, with one site admin holding its relation and one administrative organization', async () => {
    authz = await startAuthzStub();
    const db = await createTestDatabase();
    drop = db.drop;
    const env = {
      GRPC_PORT: '0',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      DATABASE_URL: db.url,
      NATS_URL: await testNatsUrl(),
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'admin',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
    };
    await startApp(orgsTeamsApp, { ...env, RUN_MIGRATIONS_ONLY: 'true' });

    const started = await Promise.allSettled([startApp(orgsTeamsApp, env), startApp(orgsTeamsApp, env)]);
    for (const s of started) if (s.status === 'fulfilled') running.push(s.value);
    expect(started.map((s) => (s.status === 'rejected' ? String(s.reason) : 'started'))).toEqual(['started', 'started']);

    for (const r of running) {
      const client = createClient(orgsTeamsV1.OrgsTeamsServiceService, `127.0.0.1:${r.grpcPort}`, { name: 'orgs-teams' });
      try {
        const { user } = await client.authenticateBasic({ username: 'admin', password: 'correct horse battery' });
        expect(user).toMatchObject({ login: 'admin', isAdmin: true });
        expect(authz.tuples.has(`user:${user!.id} admin site:platform`)).toBe(true);
      } finally {
        client.close();
      }
    }
    const knex = (running[0].ctx.db as NonNullable<typeof running[0]['ctx']['db']>).knex;
    expect(await knex.withSchema('identity').table('accounts').where({ lower_login: 'admin' }).count({ n: '*' })).toEqual([{ n: 1 }]);
    expect(await knex.withSchema('identity').table('accounts').where({ lower_login: 'platform-admin' }).count({ n: '*' })).toEqual([
      { n: 1 },
    ]);
  }, 60_000);
});
