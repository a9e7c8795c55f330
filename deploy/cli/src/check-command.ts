import * as fs from 'node:fs';
import * as path from 'node:path';
import { credentials, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import pg from 'pg';
import { assertOpenFgaSettings, authzApp } from '@platform/app-authz';
import { BusConnectError, connectBus } from '@platform/bus';
import { objectStorageEnv, openObjectStorage } from '@platform/object-storage';
import { addressVar, loadConfig, serviceEnv } from '@platform/service-kit';
import { APPS } from './apps';
import { databaseEnv, serverOf, withDatabase } from './database';
import { CliError, EXIT, type CliIo } from './io';

/** How long one check may take. */
const TIMEOUT_MS = 5_000;

interface Result {
  ok: boolean;
  line: string;
}

const pass = (line: string): Result => ({ ok: true, line });
const fail = (line: string): Result => ({ ok: false, line });

/**
 * `check`: is every dependency of this configuration reachable? The database always; NATS, OpenFGA and S3
 * object storage when configured; each backend's grpc.health.v1 when its address variable is set. One line per
 * dependency on stdout (`ok` or `FAIL`, what and why); exit 69 when any failed. The checks run in parallel.
 */
export async function check(io: CliIo): Promise<number> {
  const addresses = Object.fromEntries(APPS.filter((a) => a.addressVar).map((a) => [a.addressVar!, addressVar.optional()]));
  const config = loadConfig(
    {
      ...databaseEnv,
      NATS_URL: serviceEnv.NATS_URL,
      ...objectStorageEnv,
      ...addresses,
    },
    io.env,
  );
  // OpenFGA as authz reads it (a URL without a store id is a configuration error, 78).
  const authz = loadConfig(authzApp.env, io.env);
  assertOpenFgaSettings(authz);
  const checks: Promise<Result>[] = [checkDatabase(io.env, config.DATABASE_URL, config.DATA_DIR)];
  if (config.NATS_URL) checks.push(checkNats(config.NATS_URL));
  if (authz.OPENFGA_API_URL) checks.push(checkOpenFga(authz.OPENFGA_API_URL, authz.OPENFGA_STORE_ID!, authz.OPENFGA_API_TOKEN));
  if (config.OBJECT_STORAGE_URL) checks.push(checkObjectStorage({ ...config, DATA_DIR: config.DATA_DIR }));
  for (const { app, addressVar: name } of APPS) {
    const address = name ? (config as Record<string, unknown>)[name] : undefined;
    if (typeof address === 'string') checks.push(checkBackend(app.name, name!, address));
  }
  const results = await Promise.all(checks.map((c) => c.catch((err: Error) => fail(`unexpected failure: ${err.message}`))));
  for (const r of results) io.out(`${r.ok ? 'ok  ' : 'FAIL'}  ${r.line}\n`);
  const failed = results.filter((r) => !r.ok).length;
  if (failed) io.err(`${failed} of ${results.length} dependencies cannot be used\n`);
  return failed ? EXIT.unavailable : EXIT.ok;
}

async function checkDatabase(env: NodeJS.ProcessEnv, url: string | undefined, dataDir: string): Promise<Result> {
  if (url) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: TIMEOUT_MS, query_timeout: TIMEOUT_MS });
    const where = `postgres at ${serverOf(url)} (DATABASE_URL)`;
    // A failed connect also emits 'error'; without a listener it would crash the process.
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ version: string }>(`select current_setting('server_version') as version`);
      return pass(`database: ${where}, server ${rows[0].version}`);
    } catch (err) {
      const e = err as { code?: string; message: string };
      return fail(`database: cannot connect to ${where}: ${DB_REASON[e.code ?? ''] ?? e.message.split('\n')[0]}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  const dir = path.resolve(dataDir, 'postgres');
  if (!fs.existsSync(dir)) return pass(`database: embedded under ${dir}, not created yet (the first start or \`migrate\` creates it)`);
  try {
    return await withDatabase(env, { create: false }, async (dbs) => {
      const db = await dbs.open('public');
      await db.knex.raw('select 1');
      return pass(`database: embedded under ${dir}`);
    });
  } catch (err) {
    // The running platform holds it: that is the platform using it, not a failure.
    if (err instanceof CliError && err.exitCode === EXIT.inUse) return pass(`database: embedded under ${dir}, ${inUseBy(err.message)}`);
    return fail(`database: ${(err as Error).message}`);
  }
}

function inUseBy(message: string): string {
  const pid = /pid (\d+)/.exec(message)?.[1];
  return `in use by the running platform (pid ${pid})`;
}

const DB_REASON: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name could not be resolved',
  ETIMEDOUT: 'timed out',
  '28P01': 'password authentication failed',
  '3D000': 'the database does not exist',
};

async function checkNats(url: string): Promise<Result> {
  try {
    const bus = await connectBus(url, 'platform-cli-check');
    await bus.close();
    return pass(`NATS: ${serverList(url)} (NATS_URL), JetStream available`);
  } catch (err) {
    if (err instanceof BusConnectError) return fail(`NATS: cannot use ${err.server} (NATS_URL): ${err.reason}`);
    throw err;
  }
}

/** host:port of each server in a NATS URL list, never credentials. */
function serverList(url: string): string {
  return url
    .split(',')
    .map((u) => {
      try {
        return new URL(u.trim()).host;
      } catch {
        return 'NATS_URL';
      }
    })
    .join(',');
}

async function checkOpenFga(apiUrl: string, storeId: string, token: string | undefined): Promise<Result> {
  const where = `OpenFGA at ${apiUrl} (OPENFGA_API_URL)`;
  try {
    const res = await fetch(new URL(`stores/${storeId}`, apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`), {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (res.ok) return pass(`${where}, store ${storeId} (${((await res.json()) as { name?: string }).name ?? 'unnamed'})`);
    if (res.status === 404) return fail(`${where}: no store ${storeId} (OPENFGA_STORE_ID)`);
    if (res.status === 401 || res.status === 403) return fail(`${where}: refused the credentials (OPENFGA_API_TOKEN), HTTP ${res.status}`);
    return fail(`${where}: answered HTTP ${res.status}`);
  } catch (err) {
    return fail(`${where}: cannot reach it: ${reason(err)}`);
  }
}

async function checkObjectStorage(config: Parameters<typeof openObjectStorage>[0]): Promise<Result> {
  const where = `object storage at ${config.OBJECT_STORAGE_URL} (OBJECT_STORAGE_URL), bucket ${config.OBJECT_STORAGE_BUCKET}`;
  const storage = openObjectStorage(config);
  try {
    // A missing key reads as nothing when the bucket is there and the credentials work.
    await Promise.race([
      storage.get('platform-cli-check/none'),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS).unref()),
    ]);
    return pass(where);
  } catch (err) {
    return fail(`${where}: ${reason(err)}`);
  } finally {
    storage.close();
  }
}

const Health = makeGenericClientConstructor(healthService, 'Health');

async function checkBackend(app: string, variable: string, address: string): Promise<Result> {
  const where = `${app} at ${address} (${variable})`;
  const client = new Health(address, credentials.createInsecure()) as InstanceType<typeof Health> & {
    check(req: { service: string }, opts: { deadline: number }, cb: (err: ServiceError | null, res?: { status: string }) => void): void;
  };
  try {
    const status = await new Promise<string>((resolve, reject) =>
      client.check({ service: '' }, { deadline: Date.now() + TIMEOUT_MS }, (err, res) => (err ? reject(err) : resolve(res!.status))),
    );
    return status === 'SERVING' ? pass(`${where}, SERVING`) : fail(`${where}: health is ${status}`);
  } catch (err) {
    return fail(`${where}: ${(err as ServiceError).details || reason(err)}`);
  } finally {
    client.close();
  }
}

function reason(err: unknown): string {
  const e = err as { cause?: { code?: string; message?: string }; name?: string; message?: string };
  if (e.name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
