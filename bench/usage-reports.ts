/**
 * `npm run bench -- usage-reports`: the monthly usage views of the usage reports and the dashboard's list routes over
 * 1,000,000 usage samples of one month (or 10,000,000 with BENCH_SAMPLES=10000000), on the platform as `npm start`
 * runs it but on a real Postgres (DATABASE_URL).
 *
 * The samples are the simulator's (deploy/simulator: 40 hubs with 19 spokes each, one month, one sample an
 * hour, about 1,500 licensed objects of the four products), turned into rows by billing ingestion's own
 * mapping (sampleRows, toSampleColumns) and loaded straight into billing.usage_samples: the benchmark
 * measures reading, and loading through the bus would take minutes (docs/benchmarks.md has ingestion's own
 * numbers). Beyond the first 1,000,000, the samples are copies of those made inside Postgres (insert ... select),
 * each copy under other cluster and object UIDs, so 10,000,000 samples are ten times the clusters and objects of
 * the same month. The daily and monthly rollups are then made by ingestion's own statements (rollUpSamples,
 * rollUpSamplesByMonth) over all of them, and licensed products are derived from the samples in SQL.
 *
 * Each view is measured over HTTP (token, gateway, gRPC, the view's SQL, JSON) side by side with the bare SQL
 * aggregate that computes the same numbers from the same table the view reads, sent over one pg connection: the
 * two alternate, after a warm-up of each, and the medians are compared (target: the view at most twice the bare
 * aggregate). A month view must also answer within 100 ms at 1,000,000 samples and 300 ms at 10,000,000; next to
 * it the same aggregate over the raw samples (how the views were computed before the rollups) is timed in a few
 * rounds. The list routes are measured against a target of 100 ms. Prints progress to stderr, JSON to stdout,
 * and writes its block in docs/benchmarks.md (`usage-reports`, or `usage-reports-10m` for 10,000,000 samples).
 * A large tenant is measured too: 100,000 objects of productdb in September 2026 (one month rollup each, written
 * straight into billing.usage_object_months), whose objects view (~50 MB of JSON) must answer whole, streamed, with
 * the platform's peak memory during it growing by less than half the view's size (read from /proc: VmHWM after the
 * view, its peak reset first through clear_refs, against VmRSS before).
 * BENCH_SAMPLES changes the sample count (default 1,000,000; above it a multiple of it), BENCH_ROUNDS the least
 * rounds (7; a case under 2 s repeats until 2 s have passed, at most 200 rounds), BENCH_SAMPLE_ROUNDS the rounds
 * of the raw-samples aggregate (3), BENCH_CASES (a regular expression over the labels) picks cases, BENCH_KEEP=1
 * keeps the database.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as zlib from 'node:zlib';
import pg from 'pg';
import {
  QUANTITY,
  SAMPLE_HOURS,
  keepAllPoints,
  rollUpSamples,
  rollUpSamplesByMonth,
  sampleRows,
  toSampleColumns,
} from '@platform/app-billing-dashboard';
import { buildWorld, messagesOf } from '@platform/simulator';
import type { agentV1 } from '@platform/proto';
import { runLine, writeDocBlock } from './doc-block';
import { dropDatabase, freePort, freshDatabase, runTs, waitFor } from './support';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SAMPLE_ROUNDS = Number(process.env.BENCH_SAMPLE_ROUNDS ?? 3);
/** The simulated samples; more are copies of them (loadSamples). */
const SIMULATED = Math.min(SAMPLES, 1_000_000);
/** The large tenant's objects, in September 2026 (see loadLargeTenant). */
const TENANT_OBJECTS = 100_000;
const TENANT_LABEL = `productdb objects-usage-view, ${TENANT_OBJECTS.toLocaleString('en')} objects (streamed)`;
/** What a month view must answer within, ms. */
const VIEW_TARGET_MS = SAMPLES > 1_000_000 ? 300 : 100;
const PASSWORD = 'bench-admin-password';
/** The simulated month is October 2026, whole: the world ends on November 1. */
const MONTH_END = Date.UTC(2026, 10, 1);
const LOAD_BATCH = 5_000;
/** A case runs at least this long (ms), in at most MAX_ROUNDS rounds. */
const MIN_CASE_MS = 2_000;
const MAX_ROUNDS = 200;

const progress = (msg: string) => process.stderr.write(`[bench usage-reports] ${msg}\n`);

/** The one process of `npm start` on the given database, billing enabled. */
async function startPlatform(databaseUrl: string): Promise<{ base: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-usage-'));
  const child = runTs('deploy/local/src/main.ts', {
    HTTP_PORT: String(port),
    METRICS_PORT: String(await freePort()),
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    BILLING_ENABLED: 'true',
    PLATFORM_ADMIN_USERNAME: 'root',
    PLATFORM_ADMIN_PASSWORD: PASSWORD,
    LOG_LEVEL: 'warn',
    // Above 1,000,000 samples (~7,500 productdb objects a month) the objects views' answers pass the default 4 MiB of
    // a gRPC message (413): such a deployment raises the limit, as the benchmark does, to its maximum.
    ...(SAMPLES > 1_000_000 && { GRPC_MAX_MESSAGE_BYTES: String(64 * 1024 * 1024) }),
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/api/v1/version`, child).catch((err) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    base,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGINT');
        await new Promise((r) => child.once('exit', r));
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A site admin's token and the organization `bench` (the dashboard's `org` parameter). */
async function adminToken(base: string): Promise<string> {
  const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
  const res = await fetch(`${base}/api/v1/users/root/tokens`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  if (!res.ok) throw new Error(`token: ${res.status} ${await res.text()}`);
  const token = ((await res.json()) as { sha1: string }).sha1;
  const org = await fetch(`${base}/api/v1/orgs`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench' }),
  });
  if (!org.ok) throw new Error(`org: ${org.status} ${await org.text()}`);
  return token;
}

/**
 * Loads `count` usage samples of October 2026 into billing.usage_samples: up to 1,000,000 simulated, 5,000 rows
 * to a statement (json_populate_recordset), the rest copies of those under other cluster and object UIDs, made by
 * Postgres. Then rolls them up by day as ingestion does and derives licensed_products from them. Answers one
 * licensed object of productdb (its user, cluster, object and license) for the routes that name one.
 */
async function loadSamples(db: pg.Client, count: number): Promise<Picked> {
  if (count > SIMULATED && count % SIMULATED !== 0) throw new Error(`BENCH_SAMPLES above ${SIMULATED} must be a multiple of it`);
  const picked = await loadSimulated(db, SIMULATED);
  const columns = (
    await db.query<{ name: string }>(
      `select attname as name from pg_attribute where attrelid = 'billing.usage_samples'::regclass and attnum > 0 and not attisdropped
         and attname not in ('id', 'received_at') order by attnum`,
    )
  ).rows.map((r) => r.name);
  const copied: Record<string, string> = {
    cluster_uid: `md5(cluster_uid::text || '/' || $1)::uuid`,
    cluster_name: `cluster_name || '-' || $1`,
    object_uid: `md5(object_uid || '/' || $1)::uuid::text`,
  };
  const list = columns.map((c) => `"${c}"`).join(', ');
  const started = performance.now();
  for (let copy = 1; copy < count / SIMULATED; copy++) {
    // A statement per copy (progress, and no one transaction of 9,000,000 rows), of the simulated rows in id order.
    await db.query(
      `insert into billing.usage_samples (${list})
       select ${columns.map((c) => copied[c] ?? `"${c}"`).join(', ')} from billing.usage_samples where id <= $2 order by id`,
      [copy, maxSimulatedId],
    );
    progress(
      `copied ${((copy + 1) * SIMULATED).toLocaleString('en')} of ${count.toLocaleString('en')} samples (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    );
  }
  progress('rolling the samples up by day and by month, as ingestion does');
  const t0 = performance.now();
  await db.query(pgStatement(rollUpSamples('billing.usage_samples')));
  const t1 = performance.now();
  await db.query(pgStatement(rollUpSamplesByMonth('billing.usage_samples')));
  await db.query(pgStatement(keepAllPoints()));
  progress(
    `rolled up by day in ${((t1 - t0) / 1000).toFixed(0)} s, by month in ${((performance.now() - t1) / 1000).toFixed(0)} s; ` +
      'deriving licensed products and analysing the tables',
  );
  await db.query(`insert into billing.licensed_products (user_id, cluster_uid, license_id, product, first_received_at, last_received_at)
    select user_id, cluster_uid, license_id, product, min(start_at), max(end_at) from billing.usage_samples
    group by user_id, cluster_uid, license_id, product on conflict do nothing`);
  await db.query('analyze billing.usage_samples');
  await db.query('analyze billing.usage_object_days');
  await db.query('analyze billing.usage_object_months');
  await db.query('analyze billing.licensed_products');
  return picked;
}

/** A rollup statement for the `billing` schema (its one `??` binding). */
const pgStatement = (sql: string) => sql.replaceAll('??', 'billing');

let maxSimulatedId = '0';

/** Loads `count` simulated samples (see loadSamples). */
async function loadSimulated(db: pg.Client, count: number): Promise<Picked> {
  const world = buildWorld({
    org: 'bench',
    hubs: 40,
    spokes: 19,
    months: 1,
    seed: 7,
    sampleHours: 1,
    userIds: [101, 102, 103, 104, 105],
    nowMs: MONTH_END,
  });
  const columns = Object.keys(toSampleColumns(sampleRows(firstSample(world))[0]));
  const list = columns.map((c) => `"${c}"`).join(', ');
  const insert = `insert into billing.usage_samples (${list}) select ${list} from json_populate_recordset(null::billing.usage_samples, $1::json)`;
  let loaded = 0;
  let batch: Record<string, unknown>[] = [];
  let first: Picked | undefined;
  const started = performance.now();
  const flush = async () => {
    await db.query(insert, [JSON.stringify(batch)]);
    loaded += batch.length;
    batch = [];
    if (loaded % 100_000 < LOAD_BATCH)
      progress(
        `loaded ${loaded.toLocaleString('en')} of ${count.toLocaleString('en')} samples (${((performance.now() - started) / 1000).toFixed(0)} s)`,
      );
  };
  for (const m of messagesOf(world)) {
    if (m.kind !== 'usage-sample') continue;
    for (const row of sampleRows(m.payload as agentV1.UsageSample)) {
      if (loaded + batch.length >= count) break;
      if (row.product === 'productdb')
        first ??= { userId: row.userId, clusterUID: row.clusterUID, objectUID: row.objectUID, licenseId: row.licenseId };
      const cols = toSampleColumns(row);
      batch.push({ ...cols, resources: JSON.parse(cols.resources as string) });
      if (batch.length === LOAD_BATCH) await flush();
    }
    if (loaded + batch.length >= count) break;
  }
  if (batch.length) await flush();
  if (loaded < count) throw new Error(`the simulated world has only ${loaded} samples; raise its hubs`);
  maxSimulatedId = (await db.query<{ max: string }>('select max(id)::text as max from billing.usage_samples')).rows[0].max;
  return first!;
}

function firstSample(world: ReturnType<typeof buildWorld>): agentV1.UsageSample {
  for (const m of messagesOf(world)) if (m.kind === 'usage-sample') return m.payload as agentV1.UsageSample;
  throw new Error('the simulated world has no usage samples');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** What a case names: a route over HTTP, and the bare SQL that computes the same numbers (or a time target). */
interface Case {
  label: string;
  path: string;
  /** The bare SQL computing the view's numbers from the table the view reads. */
  bare?: { sql: string; params: unknown[] };
  /** The same numbers from the raw samples: what a month view cost before the daily rollups. */
  samples?: { sql: string; params: unknown[] };
  /** Target, ms: a month view's, or a list route's (which has no bare counterpart). */
  targetMs?: number;
  /** The large tenant's view: its target is to answer whole in bounded memory (measureMemory). */
  bounded?: true;
}

/** A process's resident memory (VmRSS) or its peak since the last reset (VmHWM), bytes, from /proc. */
function memoryOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`))!;
  return Number(line.split(/\s+/)[1]) * 1024;
}

/**
 * One request of the large tenant's view: its size and row count, and how much the platform's peak memory grew
 * during it over its memory before (the peak reset first: `5` to clear_refs resets VmHWM to the current RSS).
 */
async function measureMemory(base: string, token: string, p: string, pid: number) {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  const before = memoryOf(pid, 'VmRSS');
  const res = await fetch(`${base}/api/v1${p}`, { headers: { authorization: `token ${token}` } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${text.slice(0, 300)}`);
  const rows = (JSON.parse(text) as { rows: unknown[] }).rows.length;
  return { bytes: Buffer.byteLength(text), rows, growth: memoryOf(pid, 'VmHWM') - before };
}

/**
 * The large tenant: TENANT_OBJECTS objects of productdb in September 2026, one month rollup each, as ingestion's
 * rollup would have written them for a month of hourly samples (720 an object), on 40 clusters of their own and
 * 500 namespaces, object i having used i/1000 core-hours.
 */
async function loadLargeTenant(db: pg.Client): Promise<void> {
  const started = performance.now();
  await db.query(
    `insert into billing.usage_object_months (month, cluster_uid, object_uid, attributes_key, product, contract_id, hosting,
       namespace, namespace_uid, "group", kind, topology, cpu_request, cpu_limit, memory_request, memory_limit,
       storage_request, storage_limit, samples, last_id, cluster_name, name, version, first_at, last_at, replicas,
       cpu_peak_used, memory_peak_used, storage_peak_used, cpu_core_hours, memory_gib_hours, storage_gib_hours,
       object_hours, replica_hours)
     select '2026-09-01', ('0e000000-0000-4000-8000-' || lpad((i % 40)::text, 12, '0'))::uuid,
       '0f000000-0000-4000-8000-' || lpad(i::text, 12, '0'), md5(i::text)::uuid, 'productdb', 0, 'gks',
       'tenant-ns-' || (i % 500), 'tenant-nsuid-' || (i % 500), 'kubedb.com', 'Postgres', 'STANDALONE', 250, 500,
       1073741824, 0, 10737418240, 0, 720, i, 'tenant-cluster-' || (i % 40), 'pg-' || i, '16.1',
       '2026-09-01T00:00:00Z', '2026-10-01T00:00:00Z', 1, 250, 536870912, 0, i / 1000.0, 360, 7200, 720, 720
     from generate_series(1, $1::int) i`,
    [TENANT_OBJECTS],
  );
  await db.query('analyze billing.usage_object_months');
  progress(
    `loaded the large tenant: ${TENANT_OBJECTS.toLocaleString('en')} objects' month rows (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
}

/**
 * One request, timed until its last byte is decompressed, as a client that takes gzip reads it: node:http with the
 * body piped through zlib, so the time is the platform's and the transfer's. Node's fetch is not used here: it takes
 * as long again to hand a 32 MB body over as the platform takes to send it (measured: 996 ms against 430-490 ms with
 * curl for the 10,000,000-sample daily view).
 */
function timeHttp(base: string, token: string, p: string): Promise<number> {
  const t0 = performance.now();
  return new Promise<number>((resolve, reject) => {
    const req = http.get(`${base}/api/v1${p}`, { headers: { authorization: `token ${token}`, 'accept-encoding': 'gzip' } }, (res) => {
      const body = res.headers['content-encoding'] === 'gzip' ? res.pipe(zlib.createGunzip()) : res;
      const start: Buffer[] = [];
      let kept = 0;
      body.on('data', (chunk: Buffer) => {
        if (kept >= 300) return;
        start.push(chunk);
        kept += chunk.length;
      });
      body.on('error', reject);
      body.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) reject(new Error(`${p}: ${status} ${Buffer.concat(start).toString().slice(0, 300)}`));
        else resolve(performance.now() - t0);
      });
    });
    req.on('error', reject);
  });
}

async function timeSql(db: pg.Client, sql: string, params: unknown[]): Promise<number> {
  const t0 = performance.now();
  await db.query(sql, params);
  return performance.now() - t0;
}

async function main() {
  const name = `bench_usage_${process.pid}`;
  progress(`fresh database ${name}; starting the platform`);
  const url = await freshDatabase(name);
  const platform = await startPlatform(url);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const token = await adminToken(platform.base);
    const object = await loadSamples(db, SAMPLES);
    // BENCH_CASES (a regular expression) measures the matching cases only.
    const only = process.env.BENCH_CASES ? new RegExp(process.env.BENCH_CASES) : undefined;
    const cases = casesFor(object).filter((c) => !only || only.test(c.label));
    if (cases.some((c) => c.bounded)) await loadLargeTenant(db);
    const results: Record<string, unknown>[] = [];
    for (const c of cases) {
      const http: number[] = [];
      const bare: number[] = [];
      // A route that refuses the data set (a limit of its own) is reported as such and the run goes on.
      const refused = await timeHttp(platform.base, token, c.path).then(
        () => undefined,
        (err: Error) => err.message.replace(/^[^:]*: /, ''),
      );
      if (refused) {
        results.push({ label: c.label, error: refused.slice(0, 120), ok: false });
        progress(`${c.label}: refused: ${refused}`);
        continue;
      }
      if (c.bare) await timeSql(db, c.bare.sql, c.bare.params);
      // At least ROUNDS rounds; a fast case goes on for MIN_CASE_MS (at most MAX_ROUNDS), so a median of a few
      // milliseconds rests on enough rounds that one scheduling hiccup does not move it.
      const started = performance.now();
      for (let i = 0; i < ROUNDS || (performance.now() - started < MIN_CASE_MS && i < MAX_ROUNDS); i++) {
        if (c.bare) bare.push(await timeSql(db, c.bare.sql, c.bare.params));
        http.push(await timeHttp(platform.base, token, c.path));
      }
      const route = median(http);
      // The raw samples' aggregate, a few rounds: at 10,000,000 samples one takes seconds.
      const fromSamples: number[] = [];
      if (c.samples) for (let i = 0; i < SAMPLE_ROUNDS; i++) fromSamples.push(await timeSql(db, c.samples.sql, c.samples.params));
      const memory = c.bounded ? await measureMemory(platform.base, token, c.path, platform.pid) : undefined;
      const row = {
        label: c.label,
        rounds: http.length,
        routeMs: +route.toFixed(1),
        ...(c.bare && { bareMs: +median(bare).toFixed(1), ratio: +(route / median(bare)).toFixed(2) }),
        ...(c.samples && { samplesMs: +median(fromSamples).toFixed(1) }),
        ...(c.targetMs && { targetMs: c.targetMs }),
        ...(memory && { mb: +(memory.bytes / 1e6).toFixed(1), rows: memory.rows, growthMb: +(memory.growth / 1e6).toFixed(1) }),
      };
      // A month view (and a list route) has its time target; a view of one object its ratio to the bare query; the
      // large tenant's view every object, with the memory it took under half its size.
      const ok = memory
        ? memory.rows === TENANT_OBJECTS && memory.growth < memory.bytes / 2
        : c.targetMs
          ? route <= c.targetMs
          : row.ratio! <= 2;
      results.push({ ...row, ok });
      progress(`${c.label}: ${JSON.stringify(row)}${ok ? '' : '  ← misses its target'}`);
    }
    console.log(JSON.stringify({ samples: SAMPLES, rounds: ROUNDS, results }, null, 2));
    // A partial run (other sample counts or some cases) does not replace a full run's numbers in the docs.
    const block = { 1_000_000: 'usage-reports', 10_000_000: 'usage-reports-10m' }[SAMPLES];
    if (!only && block) writeDocBlock(block, docBlock(results));
  } finally {
    await db.end();
    await platform.stop();
    // BENCH_KEEP=1 keeps the database for a look with psql (EXPLAIN ANALYZE of a view, say).
    if (process.env.BENCH_KEEP) progress(`kept database ${name}`);
    else await dropDatabase(name);
  }
}

function docBlock(results: Record<string, any>[]): string {
  const lines = [
    runLine(
      `${SAMPLES.toLocaleString('en')} usage samples of one month, median of at least ${ROUNDS} rounds each (raw samples aggregate: ${SAMPLE_ROUNDS} round${SAMPLE_ROUNDS === 1 ? '' : 's'}) (a fast case repeats for ${MIN_CASE_MS / 1000} s, at most ${MAX_ROUNDS} rounds), over HTTP with a site admin's token, on Postgres.`,
    ),
    '',
    '| Route | Rounds | Route, median ms | Bare SQL over what it reads, median ms | Ratio | Raw samples aggregate (before), median ms | Target | Met |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map((r) =>
      r.error
        ? `| ${r.label} | — | ${r.error.replace(/\|/g, '\\|')} | — | — | — | ${r.targetMs ? `≤ ${r.targetMs} ms` : '—'} | no |`
        : `| ${r.label} | ${r.rounds} | ${r.routeMs} | ${r.bareMs ?? '—'} | ${r.ratio ?? '—'} | ${r.samplesMs ?? '—'} | ` +
          `${target(r)} | ${r.ok ? 'yes' : 'no'} |`,
    ),
  ];
  const tenant = results.find((r) => r.mb !== undefined);
  if (tenant)
    lines.push(
      '',
      `The large tenant's objects view: ${tenant.rows.toLocaleString('en')} rows, ${tenant.mb} MB of JSON, streamed; the platform's peak memory grew by ${tenant.growthMb} MB during it.`,
    );
  return lines.join('\n');
}

/** A case's target as the table shows it. */
function target(r: Record<string, any>): string {
  if (r.mb !== undefined) return `all ${TENANT_OBJECTS.toLocaleString('en')} rows, memory growth < ½ its ${r.mb} MB (${r.growthMb} MB)`;
  return r.targetMs ? `≤ ${r.targetMs} ms` : 'ratio ≤ 2';
}

interface Picked {
  /** A licensed object of productdb, for the routes that name one. */
  userId: number;
  clusterUID: string;
  objectUID: string;
  licenseId: string;
}

/**
 * The routes measured. Each view's bare SQL computes the view's numbers with the same quantities
 * (apps/billing-dashboard/src/usage/quantities.ts) over the same rows, the GROUP BY alone: what Postgres must
 * do at least, without the view's JSON document, the gateway, gRPC or HTTP.
 */
function casesFor(o: Picked): Case[] {
  const views = '/dashboard/summary/2026/10/usage-report/products';
  const month = '2026-10-01';
  const sums = (['cpu', 'memory', 'storage'] as const)
    .map((r) => `sum(${SAMPLE_HOURS} * ${QUANTITY[r]})`)
    .concat(`sum(${SAMPLE_HOURS})`)
    .join(', ');
  // The view's numbers from the rollups it reads — the monthly ones for its rows, the daily ones for a daily
  // series — adding their float8 copies as the views do for most objects; and the same from the raw samples (what
  // the views read before the rollups): the samples' columns map to the rollups' own.
  const rollupSums = ['cpu_core_hours', 'memory_gib_hours', 'storage_gib_hours', 'object_hours'].map((c) => `sum(${c}_f8)`).join(', ');
  const onRollups = (sql: string, table: 'usage_object_days' | 'usage_object_months') =>
    sql
      // The monthly rollups keep the last sample's names; the daily ones its id.
      .replace(/max\((cluster_name|name|version)\)/g, table === 'usage_object_days' ? 'max(last_id)' : 'max($1)')
      .replace(/min\(start_at\)/g, 'min(first_at)')
      .replace(/max\(end_at\)/g, 'max(last_at)')
      .replace(`sum(replicas * ${SAMPLE_HOURS})`, 'sum(replica_hours_f8)')
      .replace(/max\((cpu|memory|storage)_used\)/g, 'max($1_peak_used)')
      .replace(/\(start_at at time zone 'UTC'\)::date/g, 'day')
      .split(sums)
      .join(rollupSums)
      .replace(/billing\.usage_samples/g, `billing.${table}`);
  const both = (sql: string, params: unknown[], table: 'usage_object_days' | 'usage_object_months' = 'usage_object_months') => ({
    bare: { sql: onRollups(sql, table), params },
    samples: { sql, params },
    targetMs: VIEW_TARGET_MS,
  });
  const grouped = (product: string, by: string, extra = '', where = '') =>
    both(
      `select ${by}, ${extra ? `${extra}, ` : ''}${sums} from billing.usage_samples
          where month = $1 and product = $2 ${where} group by ${by}`,
      [month, product],
    );
  // `daily` adds the same sums per group and UTC day: both groupings, as the view computes both (from the daily
  // rollups: the view's rows come from its days).
  const daily = (product: string, by: string, where = '', params: unknown[] = []) =>
    both(
      `select ${by}, null::date as day, ${sums} from billing.usage_samples where month = $1 and product = $2 ${where} group by ${by}
          union all
          select ${by}, (start_at at time zone 'UTC')::date, ${sums} from billing.usage_samples where month = $1 and product = $2 ${where}
          group by ${by}, (start_at at time zone 'UTC')::date`,
      [month, product, ...params],
      'usage_object_days',
    );
  // The daily objects view reads the monthly rollups as a summary view does, and each object's points as ingestion
  // kept them (the bare SQL: the same rows with the kept text joined).
  const keptDaily = (product: string) => ({
    ...daily(product, 'cluster_uid, object_uid'),
    bare: {
      sql: `select m.*, array_to_string(p.daily, ',') from (select cluster_uid, object_uid, ${rollupSums} from billing.usage_object_months
              where month = $1 and product = $2 group by cluster_uid, object_uid) m
            left join billing.usage_object_month_points p on p.month = $1 and p.cluster_uid = m.cluster_uid and p.object_uid = m.object_uid`,
      params: [month, product],
    },
  });
  const objectInfo = 'max(cluster_name), max(namespace), max(kind), max(name), max(version), min(start_at), max(end_at)';
  // One object's samples and its quota periods (runs of equal requests and limits: gaps and islands).
  const quota = 'cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit';
  const oneObject = {
    sql: `with s as (select *, row_number() over (order by start_at) - row_number() over (partition by ${quota} order by start_at) as run
                     from billing.usage_samples where month = $1 and cluster_uid = $2 and object_uid = $3)
          select start_at, end_at, ${quota}, cpu_used, memory_used, storage_used, replicas::float8 as n from s
          union all
          select min(start_at), max(end_at), ${quota}, null, null, null, sum(${SAMPLE_HOURS}) from s group by ${quota}, run`,
    params: [month, o.clusterUID, o.objectUID],
  };
  const q = '?org=bench';
  const cases: Case[] = [
    {
      label: 'productdb objects-usage-view',
      path: `${views}/productdb/views/objects-usage-view${q}`,
      ...grouped('productdb', 'cluster_uid, object_uid', objectInfo),
    },
    {
      label: TENANT_LABEL,
      path: `/dashboard/summary/2026/09/usage-report/products/productdb/views/objects-usage-view${q}`,
      bare: {
        sql: `select cluster_uid, object_uid, max(name), min(first_at), max(last_at), ${rollupSums} from billing.usage_object_months
              where month = $1 and product = $2 group by cluster_uid, object_uid`,
        params: ['2026-09-01', 'productdb'],
      },
      bounded: true,
    },
    {
      label: 'productdb objects-usage-view, daily',
      path: `${views}/productdb/views/objects-usage-view${q}&view_type=daily`,
      ...keptDaily('productdb'),
    },
    {
      label: 'productdb clusters-usage-view',
      path: `${views}/productdb/views/clusters-usage-view${q}`,
      ...grouped('productdb', 'cluster_uid', 'max(cluster_name), max(hosting), count(distinct namespace), count(distinct object_uid)'),
    },
    {
      label: 'productdb namespaces-usage-view',
      path: `${views}/productdb/views/namespaces-usage-view${q}`,
      ...grouped('productdb', 'cluster_uid, namespace', 'max(cluster_name), max(namespace_uid), count(distinct object_uid)'),
    },
    {
      label: 'productdb gks-usage-view',
      path: `${views}/productdb/views/gks-usage-view${q}`,
      ...grouped(
        'productdb',
        'cluster_uid',
        'max(cluster_name), count(distinct namespace), count(distinct object_uid)',
        "and hosting = 'gks'",
      ),
    },
    {
      label: 'productdb contracts-usage-view',
      path: `${views}/productdb/views/contracts-usage-view${q}`,
      ...grouped('productdb', 'contract_id', 'count(distinct cluster_uid), count(distinct object_uid)'),
    },
    {
      label: 'productdb object-quota-history-summaries-view',
      path: `${views}/productdb/views/object-quota-history-summaries-view${q}`,
      ...grouped(
        'productdb',
        'cluster_uid, object_uid',
        `${objectInfo}, count(distinct (cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit)),
         max(cpu_request), max(cpu_limit), max(cpu_used), max(memory_request), max(memory_limit), max(memory_used),
         max(storage_request), max(storage_limit), max(storage_used)`,
      ),
    },
    {
      label: 'productdb objects-cluster-mode-usage-view',
      path: `${views}/productdb/views/objects-cluster-mode-usage-view${q}`,
      ...grouped('productdb', 'cluster_uid, object_uid', `${objectInfo}, sum(replicas * ${SAMPLE_HOURS})`, "and topology = 'CLUSTER'"),
    },
    {
      label: 'productdb object-quota-history-summaries-view, one object',
      path: `${views}/productdb/views/object-quota-history-summaries-view/clusters/${o.clusterUID}/objects/${o.objectUID}${q}`,
      bare: oneObject,
    },
    {
      label: 'productdb objects-cluster-mode-usage-view, one object',
      path: `${views}/productdb/views/objects-cluster-mode-usage-view/clusters/${o.clusterUID}/objects/${o.objectUID}${q}`,
      ...daily('productdb', 'cluster_uid, object_uid', 'and cluster_uid = $3 and object_uid = $4', [o.clusterUID, o.objectUID]),
    },
  ];
  for (const product of ['productbackup', 'productvault', 'productingress']) {
    cases.push(
      {
        label: `${product} clusters-usage-view`,
        path: `${views}/${product}/views/clusters-usage-view${q}`,
        ...grouped(product, 'cluster_uid', 'max(cluster_name), max(hosting), count(distinct namespace), count(distinct object_uid)'),
      },
      {
        label: `${product} contracts-usage-view`,
        path: `${views}/${product}/views/contracts-usage-view${q}`,
        ...grouped(product, 'contract_id', 'count(distinct cluster_uid), count(distinct object_uid)'),
      },
    );
  }
  const user = `/dashboard/users/${o.userId}`;
  const cluster = `${user}/clusters/${o.clusterUID}`;
  const lists: [string, string][] = [
    ['generated-months', '/dashboard/summary/generated-months'],
    ['licensed users', '/dashboard/users/'],
    ['active users', '/dashboard/users/active'],
    ['inactive users', '/dashboard/users/inactive'],
    ["a user's clusters", `${user}/clusters/`],
    ["a user's active clusters", `${user}/clusters/active`],
    ["a user's licenses on a cluster", `${cluster}/licenses/`],
    ["a license's products", `${cluster}/licenses/${o.licenseId}/products/`],
    ["a cluster's active licenses", `/dashboard/clusters/${o.clusterUID}/licenses/active`],
  ];
  for (const [label, p] of lists) cases.push({ label: `list: ${label}`, path: `${p}${q}`, targetMs: 100 });
  return cases;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
