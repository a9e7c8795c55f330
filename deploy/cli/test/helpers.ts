import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { authorityFromConfig, issueLicense } from '@platform/app-contracts-licensing/licensing';
import { openDatabase } from '@platform/db';
import { startApp, type RunningService } from '@platform/service-kit';
import { APPS, type CliApp } from '../src/apps';
import { runCli } from '../src/cli';

/** What a CLI run printed and answered. */
export interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI in this process, as main.ts does, with `env` only (never this process's environment). */
export async function cli(argv: string[], env: Record<string, string>, stdin = ''): Promise<Run> {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    env,
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    readStdin: async () => stdin,
  });
  return { code, out, err };
}

/** Runs `npm run cli`'s entry (deploy/cli/cli.mjs) as a process of its own. */
export function cliProcess(argv: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, '../cli.mjs'), ...argv], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

/** Some apps of the platform in this process, wired to each other as the launcher wires them. */
export interface Apps {
  /** The gateway's base URL, when it was started. */
  url: string;
  /** host:port of each started backend, by its address variable (AUTHZ_GRPC_ADDR ...). */
  addresses: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts `names` (launcher order) with `env`, each backend on a free port handed to the apps after it. */
export async function startApps(names: string[], env: Record<string, string>): Promise<Apps> {
  const running: RunningService[] = [];
  const addresses: Record<string, string> = {};
  const stop = async () => {
    for (const app of running.reverse()) await app.stop();
  };
  try {
    for (const { app, addressVar } of APPS.filter((a: CliApp) => names.includes(a.app.name))) {
      const started = await startApp(app, { GRPC_PORT: '0', HTTP_PORT: '0', MARKETPLACE_HTTP_PORT: '0', ...env, ...addresses });
      running.push(started);
      if (addressVar) addresses[addressVar] = `127.0.0.1:${started.grpcPort}`;
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const gateway = running.find((r) => r.name === 'gateway');
  return { url: gateway ? `http://127.0.0.1:${gateway.httpPort}` : '', addresses, stop };
}

/** `Authorization` value for HTTP Basic credentials. */
export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Calls the gateway's /api/v1; the body parsed when it is JSON. */
export async function api(
  url: string,
  method: string,
  route: string,
  opts: { token?: string; authorization?: string; json?: unknown } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `token ${opts.token}`;
  if (opts.authorization) headers.authorization = opts.authorization;
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${url}/api/v1${route}`, {
    method,
    headers,
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
  });
  const text = await res.text();
  return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

/** The cluster the test licenses are issued for. */
export const TEST_CLUSTER = '6f1c2a4e-8b3d-4e5f-9a0b-1c2d3e4f5a6b';

/** A license issued by the platform CA of `env`'s database (what the issue-license routes do), valid a year by default. */
export async function issueTestLicense(
  env: Record<string, string>,
  clusterUID = TEST_CLUSTER,
  notAfter = new Date(Date.now() + 365 * 86400_000),
): Promise<string> {
  const db = await openDatabase({ url: env.DATABASE_URL, dataDir: env.DATA_DIR, schema: 'contracts' });
  try {
    const authority = await authorityFromConfig(db, { DATA_DIR: env.DATA_DIR, SECRETS_ENCRYPTION_KEY: env.SECRETS_ENCRYPTION_KEY });
    const license = await issueLicense(authority, {
      clusterUID,
      email: 'owner@example.com',
      productLine: 'platform',
      tier: 'gold',
      features: ['observability'],
      plan: 'standard',
      allowOffline: false,
      disableAnalytics: false,
      enableClientBilling: false,
      restrictions: '',
      notAfter,
    });
    return Buffer.from(license.der).toString('base64');
  } finally {
    await db.close();
  }
}
