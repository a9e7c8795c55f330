import * as net from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Where this machine's own services listen when nothing else is configured (the dev/CI machine kind). */
const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const LOCAL_NATS = 'nats://127.0.0.1:4222';

const reachable = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.setTimeout(500);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });

/** A service the tests need but cannot find. Under CI=true this fails the run; it never skips. */
export class MissingServiceError extends Error {}

let containers: Promise<{ postgres: string; nats: string }> | undefined;

/** Starts Postgres and NATS (JetStream) containers once per test process, when a container engine exists. */
async function fromContainers(): Promise<{ postgres: string; nats: string }> {
  containers ??= (async () => {
    // Loaded only here: most runs never need a container engine.
    const { GenericContainer, Wait } = await import('testcontainers');
    const postgres = await new GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_DB: 'test' })
      // Room for the e2e tier's platforms side by side (.ci/run gives a local cluster the same).
      .withCommand(['postgres', '-c', 'max_connections=300'])
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    const nats = await new GenericContainer('nats:2.10-alpine').withCommand(['-js']).withExposedPorts(4222).start();
    return {
      postgres: `postgres://postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/test`,
      nats: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
    };
  })();
  return containers;
}

/**
 * The unit tier (TEST_TIER=unit, jest.tiers.js) runs with no database and no bus, so that it passes where neither
 * runs: a file that asks for one belongs in the integration tier.
 */
function refuseInUnitTier(kind: string): void {
  if (process.env.TEST_TIER === 'unit')
    throw new Error(`a unit test asked for ${kind}: a test that needs it is an integration test (name its file *.int.test.ts)`);
}

async function resolveService(kind: 'postgres' | 'nats', envVar: string, local: string): Promise<string> {
  refuseInUnitTier(kind);
  const configured = process.env[envVar];
  if (configured) return configured;
  if (await reachable(local)) return local;
  try {
    return (await fromContainers())[kind];
  } catch (err) {
    throw new MissingServiceError(
      `${kind} is needed: set ${envVar}, run it at ${local}, or make a container engine reachable for testcontainers ` +
        `(${(err as Error).message})`,
    );
  }
}

/** The Postgres server for tests: TEST_DATABASE_URL, else the local one, else a container. */
export function testPostgresUrl(): Promise<string> {
  return resolveService('postgres', 'TEST_DATABASE_URL', LOCAL_POSTGRES);
}

/**
 * The NATS server (with JetStream) for tests: with parallel jest workers, the one of this worker (jest.workers.js at
 * the root), so that files running at the same time never hear each other; else TEST_NATS_URL, else the local one,
 * else a container.
 */
export function testNatsUrl(): Promise<string> {
  refuseInUnitTier('nats');
  const ofWorker = process.env[`TEST_NATS_URL_WORKER_${process.env.JEST_WORKER_ID}`];
  if (ofWorker) return Promise.resolve(ofWorker);
  return resolveService('nats', 'TEST_NATS_URL', LOCAL_NATS);
}

/** A database name this module makes or accepts: it goes into SQL unquoted. */
const DATABASE_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/**
 * A fresh database for one test file; drop() removes it. Empty, or, with `template`, a copy of that database
 * (`templateDatabase`): CREATE DATABASE ... TEMPLATE copies a migrated schema in well under a second, where running
 * the migrations takes seconds.
 */
export async function createTestDatabase(options: { template?: string } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const server = await testPostgresUrl();
  const name = `t_${randomBytes(6).toString('hex')}`;
  if (options.template && !DATABASE_NAME.test(options.template)) throw new Error(`not a template database name: ${options.template}`);
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`create database ${name}${options.template ? ` template ${options.template}` : ''}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: server });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * The database `name` on the test server, made once by `build` (given its URL) if it does not exist yet, to copy
 * test databases from (`createTestDatabase({ template })`). Test files in parallel workers may ask at the same time:
 * an advisory lock lets one build while the others wait, and the database gets its name only once built (a build
 * that failed halfway leaves nothing under it). `build` must close every connection it opens: a database with a
 * session open can be neither renamed nor copied. Name it after what it holds (a hash of the migrations), so that
 * a changed migration makes a new one.
 */
export async function templateDatabase(name: string, build: (url: string) => Promise<void>): Promise<string> {
  if (!DATABASE_NAME.test(name) || name.length > 50) throw new Error(`not a template database name: ${name}`);
  const server = await testPostgresUrl();
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query('select pg_advisory_lock(hashtext($1))', [name]);
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) {
      const building = `${name}_building`;
      await admin.query(`drop database if exists ${building} with (force)`);
      await admin.query(`create database ${building}`);
      const url = new URL(server);
      url.pathname = `/${building}`;
      try {
        await build(url.toString());
        await admin.query(`alter database ${building} rename to ${name}`);
      } catch (err) {
        await admin.query(`drop database if exists ${building} with (force)`);
        throw err;
      }
    }
    return name;
  } finally {
    await admin.end(); // ends the session, and with it the advisory lock
  }
}
