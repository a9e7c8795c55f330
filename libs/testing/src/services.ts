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

async function resolveService(kind: 'postgres' | 'nats', envVar: string, local: string): Promise<string> {
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

/** The NATS server (with JetStream) for tests: TEST_NATS_URL, else the local one, else a container. */
export function testNatsUrl(): Promise<string> {
  return resolveService('nats', 'TEST_NATS_URL', LOCAL_NATS);
}

/** A fresh, empty database for one test file; drop() removes it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const server = await testPostgresUrl();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
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
