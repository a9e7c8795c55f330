import { spawn } from 'node:child_process';
import * as path from 'node:path';
import pg from 'pg';
import type { Migration } from '@platform/db';
import { createTestDatabase, freePort } from '@platform/testing';
import { serviceEnv } from './config';
import { defineApp, startApp } from './main';
import { startService } from './service';

const ROOT = path.resolve(__dirname, '../../..');

const migrations: Migration[] = [
  {
    name: '0001_things',
    up: (knex, schema) => knex.schema.withSchema(schema).createTable('things', (t) => t.increments('id')),
    down: (knex, schema) => knex.schema.withSchema(schema).dropTable('things'),
  },
];

describe('migrate-only mode (RUN_MIGRATIONS_ONLY, the chart’s migration Job)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db?.drop());

  it('applies the app’s migrations, builds no gRPC service and serves nothing', async () => {
    const grpc = jest.fn(() => []);
    const app = defineApp({
      name: 'migrating',
      env: serviceEnv,
      start: (config) =>
        startService({ name: 'migrating', protoPackage: 'gateway', database: { schema: 'migrating', migrations }, grpc }, config),
    });
    const running = await startApp(app, { DATABASE_URL: db.url, RUN_MIGRATIONS_ONLY: 'true', GRPC_PORT: '0', LOG_LEVEL: 'silent' });
    await running.stop();

    expect({ migrationsOnly: running.migrationsOnly, grpcPort: running.grpcPort }).toEqual({ migrationsOnly: true, grpcPort: 0 });
    expect(grpc).not.toHaveBeenCalled();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query('select name from migrating.knex_migrations');
      expect(rows.map((r) => r.name)).toEqual(['0001_things']);
      expect((await client.query('select count(*)::int as n from migrating.things')).rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('runMain exits with code 0 after migrating, without connecting to the bus', async () => {
    const closed = await freePort(); // a bus app would exit 69 here: nothing listens on this NATS port
    const child = spawn(
      path.join(ROOT, 'node_modules/.bin/tsx'),
      ['--tsconfig', 'tsconfig.base.json', 'libs/service-kit/src/fixtures/bus-app.ts'],
      {
        cwd: ROOT,
        env: { ...process.env, NATS_URL: `nats://127.0.0.1:${closed}`, GRPC_PORT: '0', LOG_LEVEL: 'info', RUN_MIGRATIONS_ONLY: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('bus-app: migrations applied, not serving (RUN_MIGRATIONS_ONLY)');
    expect(stdout).not.toMatch(/NATS|started/);
  }, 30_000);
});
