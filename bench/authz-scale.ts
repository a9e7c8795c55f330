/**
 * authz at 10k, 100k and 1M members: what one replica needs in each way it keeps tuples. For each size it seeds a
 * fresh database `bench_authz_scale` (on BENCH_DATABASE_URL, default TEST_DATABASE_URL or the local server) with
 * tuples shaped like the platform's (apps/authz/model/platform.fga: organizations of 10 teams of 50 members, the
 * first team its owners, 5 custom roles each granted create_role, edit and create_team and assigned to two teams),
 * then starts the embedded engine in a process of its own twice: in memory mode (every tuple held) and in table
 * mode (AUTHZ_MEMORY_TUPLES_MAX below the count: checks read the table through the bounded cache). Each process
 * reports its start-up time (counting and loading), resident memory before and after, check latency and the cache's
 * hit rate: over checks about members spread over all of them, then over the last 1,000 of them asked again.
 * Then it starts authz itself as the image runs it (its bundle, dist/apps/authz/main.js, made here; NATS on
 * BENCH_NATS_URL, default TEST_NATS_URL or the local server) once per mode, and reports the time until its tuples
 * were loaded (or counted) and its resident memory then, from its /metrics.
 *
 * `npm run bench -- authz-scale [members,...]`, e.g. `npm run bench -- authz-scale 10000,100000`.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { openDatabase } from '@platform/db';
import { metricsText } from '@platform/telemetry';
import { EmbeddedEngine, TypeSystem, authzMigrations } from '@platform/app-authz';
import { freePort, freshDatabase, PG_SERVER, PLATFORM_NODE_FLAGS, ROOT } from './support';

const TEAM_SIZE = 50;
const TEAMS_PER_ORG = 10;
const ROLES_PER_ORG = 5;
const CHECKS = 5_000;
const WARM_UP = 1_000;
const AGAIN = 1_000;
const DATABASE = 'bench_authz_scale';

const log = (msg: string) => process.stderr.write(`[bench authz-scale] ${msg}\n`);

/** The tuples of `members` members, generated inside Postgres (generate_series); every member in one team. */
function seedSteps(s: string, members: number): [string, string][] {
  const teams = Math.ceil(members / TEAM_SIZE);
  const orgs = Math.ceil(teams / TEAMS_PER_ORG);
  const roles = orgs * ROLES_PER_ORG;
  const ins = `insert into ${s}.tuples (object_type, object_id, relation, user_type, user_id, user_relation)`;
  const orgOf = (t: string) => `((${t} - 1) / ${TEAMS_PER_ORG} + 1)`;
  return [
    ['site links', `${ins} select 'organization', o::text, 'site', 'site', 'platform', '' from generate_series(1, ${orgs}) o`],
    [
      'owner teams',
      `${ins} select 'organization', o::text, 'owner', 'team', ((o - 1) * ${TEAMS_PER_ORG} + 1)::text, 'member' from generate_series(1, ${orgs}) o`,
    ],
    [
      'member teams',
      `${ins} select 'organization', ${orgOf('t')}::text, 'member', 'team', t::text, 'member' from generate_series(1, ${teams}) t
         where (t - 1) % ${TEAMS_PER_ORG} <> 0`,
    ],
    [
      'teams in organizations',
      `${ins} select 'team', t::text, 'organization', 'organization', ${orgOf('t')}::text, '' from generate_series(1, ${teams}) t`,
    ],
    [
      'team members',
      `${ins} select 'team', ((u - 1) / ${TEAM_SIZE} + 1)::text, 'member', 'user', u::text, '' from generate_series(1, ${members}) u`,
    ],
    [
      'roles in organizations',
      `${ins} select 'role', r::text, 'organization', 'organization', ((r - 1) / ${ROLES_PER_ORG} + 1)::text, '' from generate_series(1, ${roles}) r`,
    ],
    [
      'role grants',
      `${ins} select 'organization', ((r - 1) / ${ROLES_PER_ORG} + 1)::text, g, 'role', r::text, 'assignee'
         from generate_series(1, ${roles}) r, unnest(array['create_role', 'edit', 'create_team']) g`,
    ],
    [
      'teams assigned to roles',
      `${ins} select 'role', ((${orgOf('t')} - 1) * ${ROLES_PER_ORG} + (t % ${ROLES_PER_ORG}) + 1)::text, 'assignee', 'team', t::text, 'member'
         from generate_series(1, ${teams}) t where (t - 1) % ${TEAMS_PER_ORG} <> 0`,
    ],
  ];
}

/**
 * Check i: a member spread over all of them (a multiplicative walk), asking create_role on their own organization
 * (allowed: owner, or through a team's role) or, every other check, on the next one (denied, which walks every path).
 */
function question(i: number, members: number) {
  const user = ((i * 2_654_435_761) % members) + 1;
  const orgs = Math.ceil(Math.ceil(members / TEAM_SIZE) / TEAMS_PER_ORG);
  const own = Math.floor((user - 1) / TEAM_SIZE / TEAMS_PER_ORG) + 1;
  const org = i % 2 === 0 ? own : (own % orgs) + 1;
  return { user: `user:${user}`, relation: 'create_role', object: `organization:${org}` };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Resident memory and heap in MB after a full collection (the runner starts node without --expose-gc). */
function memoryMb(): { rss: number; heap: number } {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss: Math.round(rss / 2 ** 20), heap: Math.round(heapUsed / 2 ** 20) };
}

/** The cache's lookups so far, by result. */
async function lookups(): Promise<{ hits: number; misses: number }> {
  const { body } = await metricsText();
  const count = (result: string) =>
    Number(new RegExp(`^cache_lookups_total\\{cache="authz.tuples",result="${result}"\\} (\\d+)`, 'm').exec(body)?.[1] ?? 0);
  return { hits: count('hit'), misses: count('miss') };
}

/** Checks `from` to `from + count` one at a time: how many were allowed, latency, and the cache's hit rate meanwhile. */
async function pass(engine: EmbeddedEngine, members: number, from: number, count: number) {
  const before = await lookups();
  const latencies: number[] = [];
  let allowed = 0;
  for (let i = from; i < from + count; i++) {
    const t0 = performance.now();
    if (await engine.check(question(i, members))) allowed++;
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  const after = await lookups();
  const [hits, misses] = [after.hits - before.hits, after.misses - before.misses];
  return {
    allowed,
    p50Ms: +percentile(latencies, 50).toFixed(3),
    p99Ms: +percentile(latencies, 99).toFixed(3),
    cacheHitRate: hits + misses ? +(hits / (hits + misses)).toFixed(2) : undefined,
  };
}

/** One replica: loads in the given mode, measures, prints its JSON on stdout. */
async function replica(mode: 'memory' | 'table', members: number, url: string): Promise<void> {
  const db = await openDatabase({ url, dataDir: '', schema: 'authz' });
  const model = TypeSystem.fromFile();
  const rssBefore = memoryMb();
  const maxTuples = mode === 'memory' ? Number.MAX_SAFE_INTEGER - 1 : 0;
  const engine = new EmbeddedEngine(db, model, { memory: { maxTuples } });
  const started = performance.now();
  await engine.load();
  const startSeconds = +((performance.now() - started) / 1000).toFixed(2);
  const rssLoaded = memoryMb();
  for (let i = 0; i < WARM_UP; i++) await engine.check(question(i + CHECKS, members));
  const first = await pass(engine, members, 0, CHECKS);
  const rssAfter = memoryMb();
  // The last checks asked again: members asked about a moment ago, the cache's best case.
  const again = await pass(engine, members, CHECKS - AGAIN, AGAIN);
  const cache = engine.inMemory!.cache;
  const result = {
    mode: engine.inMemory!.mode,
    startSeconds,
    memoryMb: { before: rssBefore, loaded: rssLoaded, afterChecks: rssAfter },
    tuplesInMemory: engine.inMemory!.size ?? 0,
    cacheTuples: cache?.size ?? 0,
    ...first,
    again,
  };
  engine.close();
  await db.close();
  process.stdout.write(JSON.stringify(result) + '\n');
}

/** Runs `replica` in a process of its own, so each mode's memory is its own. */
function inOwnProcess(mode: 'memory' | 'table', members: number, url: string) {
  const res = spawnSync(
    process.execPath,
    [
      require.resolve('tsx/cli'),
      '--tsconfig',
      'tsconfig.base.json',
      path.join('bench', 'authz-scale.ts'),
      '--replica',
      mode,
      String(members),
      url,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 2 ** 20 },
  );
  if (res.status !== 0) throw new Error(`the ${mode} replica exited with ${res.status}`);
  return JSON.parse(res.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

/** authz as the image runs it, in the given mode: milliseconds until its tuples were loaded or counted, and its RSS then. */
async function service(mode: 'memory' | 'table', url: string): Promise<{ startMs: number; rssMb: number; log: string }> {
  const metricsPort = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: url,
    NATS_URL: process.env.BENCH_NATS_URL ?? process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
    BUS_NAMESPACE: `benchscale${process.pid}`,
    GRPC_PORT: String(await freePort()),
    METRICS_PORT: String(metricsPort),
    // Table mode by a bound below any count; memory mode by the default bound or, past it, one above the count.
    AUTHZ_MEMORY_TUPLES_MAX: mode === 'table' ? '0' : '100000000',
  };
  const started = performance.now();
  const child = spawn(process.execPath, [...PLATFORM_NODE_FLAGS, 'dist/apps/authz/main.js'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let rest = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop()!;
        const done = lines.find((l) => l.includes('authorization tuples'));
        if (done) resolve(done);
      });
      child.once('exit', (code) => reject(new Error(`authz exited with ${code}`)));
    });
    const startMs = Math.round(performance.now() - started);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const rss = Number(/^process_resident_memory_bytes (\S+)/m.exec(metrics)?.[1]);
    return { startMs, rssMb: Math.round(rss / 2 ** 20), log: (JSON.parse(line) as { msg: string }).msg };
  } finally {
    child.kill();
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === '--replica') {
    await replica(process.argv[3] as 'memory' | 'table', Number(process.argv[4]), process.argv[5]);
    return;
  }
  const sizes = (process.argv[2] ?? '10000,100000,1000000').split(',').map(Number);
  const bundled = spawnSync(process.execPath, [path.join(ROOT, 'deploy/docker/bundle.js'), 'authz'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (bundled.status !== 0) throw new Error('bundling authz failed');
  const rows = [];
  for (const members of sizes) {
    const url = await freshDatabase(DATABASE, PG_SERVER);
    const db = await openDatabase({ url, dataDir: '', schema: 'authz' });
    await db.migrate(authzMigrations);
    const started = performance.now();
    for (const [, sql] of seedSteps(db.schema, members)) await db.knex.raw(sql);
    await db.knex.raw(`vacuum analyze ${db.schema}.tuples`);
    const [{ count }] = (await db.knex.raw(`select count(*)::int as count from ${db.schema}.tuples`)).rows;
    log(
      `${members.toLocaleString()} members: seeded ${count.toLocaleString()} tuples in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    await db.close();
    const memory = inOwnProcess('memory', members, url);
    log(`${members.toLocaleString()} members, memory mode: ${JSON.stringify(memory)}`);
    const table = inOwnProcess('table', members, url);
    log(`${members.toLocaleString()} members, table mode: ${JSON.stringify(table)}`);
    if (memory.allowed !== table.allowed)
      throw new Error(`answers differ: ${memory.allowed} allowed from memory, ${table.allowed} from the table`);
    const services = { memory: await service('memory', url), table: await service('table', url) };
    log(`${members.toLocaleString()} members, authz itself: ${JSON.stringify(services)}`);
    rows.push({ members, tuples: count, memory, table, services });
  }
  process.stdout.write(JSON.stringify({ checks: CHECKS, rows }, null, 2) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
