/**
 * `npm run bench -- http`: authenticated HTTP routes of the platform against a bare Express 5 JSON handler,
 * measured side by side in one run, in both topologies: the one process of `npm start` (embedded database)
 * and one process per app on a real Postgres and NATS. Each platform measurement is paired with a bare
 * one taken just before it, so the ratio holds however busy the machine is. Prints progress to stderr, the
 * JSON result to stdout, and writes the table into docs/benchmarks.md, with a row for the embedded authz engine
 * (bench/authz-check.ts: p99 of a check at 1M tuples, depth 3). Modes: `embedded,separate,authz` (default all).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { runLine, writeDocBlock } from './doc-block';
import { PG_SERVER, ROOT, freePort, runTs, waitFor } from './support';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 6);
const CONNECTIONS = 32;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const PASSWORD = 'bench-admin-password';
const NATS = process.env.BENCH_NATS_URL ?? process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const APPS = ['authz', 'orgs-teams', 'contracts-licensing', 'billing-dashboard', 'metricsproxy', 'clusters', 'marketplace-listener'];
const ADDR_VARS: Record<string, string> = {
  authz: 'AUTHZ_GRPC_ADDR',
  'orgs-teams': 'ORGS_TEAMS_GRPC_ADDR',
  'contracts-licensing': 'CONTRACTS_LICENSING_GRPC_ADDR',
  'billing-dashboard': 'BILLING_DASHBOARD_GRPC_ADDR',
  metricsproxy: 'METRICSPROXY_GRPC_ADDR',
  clusters: 'CLUSTERS_GRPC_ADDR',
  'marketplace-listener': 'MARKETPLACE_LISTENER_GRPC_ADDR',
};

const progress = (msg: string) => process.stderr.write(`[bench http] ${msg}\n`);

/** A route as measured: its label, how to call it, and its target share of the bare handler's throughput. */
interface Case {
  label: string;
  target: number;
  request(base: string, token: string): autocannon.Options;
}

const CASES: Case[] = [
  { label: 'GET /api/v1/version', target: 0.6, request: (b) => ({ url: `${b}/api/v1/version` }) },
  {
    label: 'GET /api/v1/orgs/{org} (token)',
    target: 0.3,
    request: (b, t) => ({ url: `${b}/api/v1/orgs/bench`, headers: { authorization: `token ${t}` } }),
  },
  {
    label: 'GET /api/v1/orgs/{org}/teams (token)',
    target: 0.15,
    request: (b, t) => ({ url: `${b}/api/v1/orgs/bench/teams`, headers: { authorization: `token ${t}` } }),
  },
  {
    label: 'POST /api/v1/authz/objects/allowed-permissions (2 objects)',
    target: 0.15,
    request: (b, t) => ({
      url: `${b}/api/v1/authz/objects/allowed-permissions?org=bench`,
      method: 'POST',
      headers: { authorization: `token ${t}`, 'content-type': 'application/json' },
      body: '', // set once the org id is known
    }),
  },
];

/** The bare baseline: Express 5 answering a small JSON body, in a process of its own like the platform. */
async function startBare(): Promise<{ base: string; stop(): void }> {
  const port = await freePort();
  const code = `const e = require('express')(); e.get('/api/v1/version', (_q, r) => r.json({ version: '0.1.0' }));
    e.get('*splat', (_q, r) => r.json({ id: 1, username: 'bench', full_name: '', description: '' }));
    e.post('*splat', (_q, r) => r.json([]));
    e.listen(${port}, '127.0.0.1');`;
  const child = spawn(process.execPath, ['-e', code], { cwd: ROOT, stdio: 'inherit' });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/api/v1/version`, child);
  return { base, stop: () => child.kill('SIGKILL') };
}

interface Platform {
  base: string;
  stop(): Promise<void>;
}

/** `npm start`'s one process on the embedded database, in a fresh DATA_DIR. */
async function startEmbedded(): Promise<Platform> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-http-'));
  const child = runTs('deploy/local/src/main.ts', {
    HTTP_PORT: String(port),
    DATA_DIR: dataDir,
    PLATFORM_ADMIN_USERNAME: 'root',
    PLATFORM_ADMIN_PASSWORD: PASSWORD,
    LOG_LEVEL: 'info',
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/api/v1/version`, child);
  return {
    base,
    async stop() {
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One process per app, as the Helm chart runs them, on a fresh Postgres database and the NATS server. */
async function startSeparate(): Promise<Platform> {
  const name = `bench_http_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_SERVER });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const db = new URL(PG_SERVER);
  db.pathname = `/${name}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-http-'));
  const ports = Object.fromEntries(await Promise.all(APPS.map(async (a) => [a, await freePort()] as const)));
  const common = {
    DATABASE_URL: db.toString(),
    NATS_URL: NATS,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    PLATFORM_ADMIN_USERNAME: 'root',
    PLATFORM_ADMIN_PASSWORD: PASSWORD,
    ...Object.fromEntries(APPS.map((a) => [ADDR_VARS[a], `127.0.0.1:${ports[a]}`])),
  };
  const children: ChildProcess[] = [];
  const listenerHttp = await freePort();
  for (const app of APPS) {
    const child = runTs(`apps/${app}/src/main.ts`, {
      ...common,
      GRPC_PORT: String(ports[app]),
      // Each pod has its own 9464; here they share one host.
      METRICS_PORT: String(await freePort()),
      MARKETPLACE_HTTP_PORT: String(listenerHttp),
    });
    children.push(child);
    // authz first: the others write relationships at start.
    if (app === 'authz' || app === 'orgs-teams') await new Promise((r) => setTimeout(r, 4000));
  }
  const httpPort = await freePort();
  const gateway = runTs('apps/gateway/src/main.ts', {
    ...common,
    GRPC_PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    HTTP_PORT: String(httpPort),
    MARKETPLACE_LISTENER_HTTP_URL: `http://127.0.0.1:${listenerHttp}`,
  });
  children.push(gateway);
  const base = `http://127.0.0.1:${httpPort}`;
  const killAll = () => children.forEach((c) => c.kill('SIGTERM'));
  // A platform that does not come up leaves no process behind (one would hold its ports for the next run).
  await waitFor(`${base}/api/v1/version`, gateway).catch((err) => {
    killAll();
    throw err;
  });
  return {
    base,
    async stop() {
      killAll();
      await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
      const a = new pg.Client({ connectionString: PG_SERVER });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A token, the organization `bench` with 10 teams (2 with a custom role), as a client would set them up. */
async function seed(base: string): Promise<{ token: string; orgId: number; teamId: number }> {
  const call = async (method: string, p: string, body: unknown, auth: string) => {
    const res = await fetch(`${base}/api/v1${p}`, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
  const token = (await call('POST', '/users/root/tokens', { name: 'bench' }, basic)).sha1 as string;
  const auth = `token ${token}`;
  const org = await call('POST', '/orgs', { username: 'bench' }, auth);
  let teamId = 0;
  for (let i = 0; i < 10; i++) teamId = (await call('POST', '/orgs/bench/teams', { name: `team-${i}`, type: 'general' }, auth)).id;
  await call(
    'POST',
    '/authz/roles?org=bench',
    { name: 'editors', permissions: [{ namespace: 'org', action: 'edit' }], teamIDs: [teamId] },
    auth,
  );
  return { token, orgId: org.id, teamId };
}

interface Measured {
  rps: number;
  p99: number;
  errors: number;
}

async function measure(opts: autocannon.Options): Promise<Measured> {
  const result = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...opts });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

interface Row {
  mode: string;
  route: string;
  target: number;
  bare: Measured;
  platform: Measured;
  ratio: number;
}

async function benchMode(mode: string, start: () => Promise<Platform>, bare: { base: string }): Promise<Row[]> {
  progress(`${mode}: starting the platform`);
  const platform = await start();
  try {
    const { token, orgId, teamId } = await seed(platform.base);
    const rows: Row[] = [];
    for (const c of CASES) {
      const body = JSON.stringify([
        { objectType: 'organization', objectID: orgId },
        { objectType: 'team', objectID: teamId },
      ]);
      const build = (base: string) => ({ ...c.request(base, token), ...(c.request(base, token).method === 'POST' && { body }) });
      // Warm both, then alternate bare and platform so both see the same machine.
      await measure({ ...build(platform.base), duration: 2 });
      let best: Row | undefined;
      for (let round = 1; round <= ROUNDS; round++) {
        progress(`${mode}: ${c.label}, round ${round}/${ROUNDS}`);
        const b = await measure(build(bare.base));
        const p = await measure(build(platform.base));
        const row = { mode, route: c.label, target: c.target, bare: b, platform: p, ratio: p.rps / b.rps };
        if (!best || row.ratio > best.ratio) best = row;
      }
      rows.push(best!);
      progress(`${mode}: ${c.label}: ${(best!.ratio * 100).toFixed(1)}% of bare, p99 ${best!.platform.p99} ms (bare ${best!.bare.p99} ms)`);
    }
    return rows;
  } finally {
    await platform.stop();
  }
}

function table(rows: Row[]): string {
  const lines = [
    '| mode | route | bare req/s | platform req/s | ratio | target | p99 platform / bare (ms) | p99 within 5× | errors |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.mode} | ${r.route} | ${Math.round(r.bare.rps)} | ${Math.round(r.platform.rps)} | ${(r.ratio * 100).toFixed(1)}% | ` +
        `${(r.target * 100).toFixed(0)}% ${r.ratio >= r.target ? 'met' : '**not met**'} | ${r.platform.p99} / ${r.bare.p99} | ` +
        `${r.platform.p99 <= 5 * r.bare.p99 ? 'yes' : '**no**'} | ${r.platform.errors} |`,
    );
  }
  return lines.join('\n');
}

/** What `bench/authz-check.ts` prints. */
interface AuthzCheck {
  tuples: number;
  p50Ms: number;
  p99Ms: number;
  sequentialChecksPerSecond: number;
  concurrentChecksPerSecond: number;
}

/** Runs the authz check benchmark (1M tuples, depth 3) in its own process, for its row of the table. */
function authzCheck(): AuthzCheck {
  progress('authz check at 1M tuples (bench/authz-check.ts)');
  const res = spawnSync(process.execPath, [require.resolve('tsx/cli'), '--tsconfig', 'tsconfig.base.json', 'bench/authz-check.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (res.status !== 0) throw new Error(`bench/authz-check.ts failed (${res.status})`);
  return JSON.parse(res.stdout) as AuthzCheck;
}

/** The authz engine's row, in the columns of the HTTP rows: checks a second where requests are, p99 ≤ 1 ms as its target. */
function authzRow(a: AuthzCheck): string {
  return (
    `| embedded authz engine | check at ${a.tuples.toLocaleString('en')} tuples, depth 3 (sequential; ${a.concurrentChecksPerSecond} checks/s with 8 concurrent) | — | ` +
    `${a.sequentialChecksPerSecond} checks/s | — | p99 ≤ 1 ms ${a.p99Ms <= 1 ? 'met' : '**not met**'} | ${a.p99Ms} (p50 ${a.p50Ms}) / — | — | — |`
  );
}

/** Replaces the generated block of docs/benchmarks.md (between the markers) with this run's table. */
function writeDoc(rows: Row[], authz: AuthzCheck | undefined): void {
  writeDocBlock(
    'http',
    [
      runLine(`${CONNECTIONS} connections, ${DURATION_S} s per measurement, best of ${ROUNDS} paired rounds.`),
      '',
      table(rows) + (authz ? `\n${authzRow(authz)}` : ''),
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const modes = (process.argv[2] ?? 'embedded,separate,authz').split(',');
  const bare = await startBare();
  const rows: Row[] = [];
  try {
    if (modes.includes('embedded')) rows.push(...(await benchMode('one process, embedded', startEmbedded, bare)));
    if (modes.includes('separate')) rows.push(...(await benchMode('separate processes, Postgres', startSeparate, bare)));
  } finally {
    bare.stop();
  }
  const authz = modes.includes('authz') ? authzCheck() : undefined;
  writeDoc(rows, authz);
  process.stdout.write(`${JSON.stringify({ rows, authz }, null, 2)}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
