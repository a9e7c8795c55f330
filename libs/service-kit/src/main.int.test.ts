import { spawn } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import pg from 'pg';
import type { Migration } from '@platform/db';
import { createTestDatabase, freePort, startPrivateNats, type PrivateNats } from '@platform/testing';
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

/**
 * A TCP relay to `target` that can fall silent: after `freeze()` it keeps every connection open and passes nothing on,
 * as a server behind a route that dropped does (no reset, no close: the client waits).
 */
async function freezableRelay(target: URL): Promise<{ port: number; freeze(): void; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect({ host: target.hostname, port: Number(target.port || 5432) });
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze() {
      for (const s of sockets) {
        s.unpipe();
        s.pause();
      }
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('a stop that waits on a server that answers nothing', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let nats: PrivateNats;
  let relay: Awaited<ReturnType<typeof freezableRelay>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    nats = await startPrivateNats();
    relay = await freezableRelay(new URL(db.url));
  });
  afterAll(async () => {
    nats?.resume();
    await relay?.close();
    await nats?.dispose();
    await db?.drop();
  });

  // A paused NATS server keeps its connections open and never answers the drain a stop sends: without the bound the
  // app waited forever (the database behind it would have been given up on after tarn's 5 s).
  it('gives up when its NATS server and database both stopped answering: exits 1, naming what it waited on', async () => {
    const url = new URL(db.url);
    url.host = `127.0.0.1:${relay.port}`;
    const child = spawn(
      path.join(ROOT, 'node_modules/.bin/tsx'),
      ['--tsconfig', 'tsconfig.base.json', 'libs/service-kit/src/fixtures/database-bus-app.ts'],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: url.toString(),
          NATS_URL: nats.url,
          GRPC_PORT: '0',
          METRICS_PORT: '0',
          LOG_LEVEL: 'info',
          LOG_FORMAT: 'json',
          SHUTDOWN_TIMEOUT_MS: '1000',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await Promise.race([
      new Promise((resolve) => child.stdout.on('data', () => output.includes('database-bus-app started') && resolve(null))),
      exited,
    ]);
    relay.freeze();
    nats.pause();
    child.kill('SIGTERM');

    expect(await exited).toBe(1);
    expect(output).toContain('the stop did not end within 1000 ms (SHUTDOWN_TIMEOUT_MS): still closing the NATS connection');
  }, 60_000);
});
