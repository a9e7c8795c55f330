/**
 * Authz check benchmark: the embedded engine over ~1M tuples with nested team/role depth 3
 * (organization#create_role <- role#assignee <- team#member <- user). Reports, for each way the engine reads
 * tuples, p50/p99 check latency and checks per second, sequential and concurrent: from memory with `strict`
 * freshness (one change-log read per check, what a Postgres server gets), from memory with `local` freshness
 * (no statement per check, what the embedded PGlite gets), and the walk over the table. Also the time to load
 * the tuples into memory and the memory they take. Seeds a fresh database `bench_authz` on BENCH_DATABASE_URL
 * (default: TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test).
 */
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { openDatabase, type Database } from '@platform/db';
import { EmbeddedEngine, TypeSystem, authzMigrations } from '@platform/app-authz';
import { freshDatabase } from './support';

const ORGS = 2_000;
const TEAMS_PER_ORG = 20;
const MEMBERS_PER_TEAM = 22;
const ROLES_PER_ORG = 5;
const USERS = 200_000;
const CHECKS = 10_000;
const CONCURRENCY = 8;

const log = (msg: string) => process.stderr.write(`[bench authz] ${msg}\n`);

/** Seeding steps: each generates its tuples inside Postgres (generate_series), so 1M rows take seconds. */
function seedSteps(s: string): [string, string][] {
  const teams = ORGS * TEAMS_PER_ORG;
  const roles = ORGS * ROLES_PER_ORG;
  const ins = `insert into ${s}.tuples (object_type, object_id, relation, user_type, user_id, user_relation)`;
  return [
    [
      'site links of organizations',
      `${ins} select 'organization', o::text, 'site', 'site', 'platform', '' from generate_series(1, ${ORGS}) o`,
    ],
    [
      'organization owners',
      `${ins} select 'organization', o::text, 'owner', 'user', (o % ${USERS} + 1)::text, '' from generate_series(1, ${ORGS}) o`,
    ],
    [
      'teams in organizations',
      `${ins} select 'team', t::text, 'organization', 'organization', ((t - 1) / ${TEAMS_PER_ORG} + 1)::text, '' from generate_series(1, ${teams}) t`,
    ],
    [
      'team members',
      `${ins} select 'team', t::text, 'member', 'user', (((t::bigint * ${MEMBERS_PER_TEAM} + m) * 7919) % ${USERS} + 1)::text, ''
         from generate_series(1, ${teams}) t, generate_series(0, ${MEMBERS_PER_TEAM - 1}) m on conflict do nothing`,
    ],
    [
      'roles in organizations',
      `${ins} select 'role', r::text, 'organization', 'organization', ((r - 1) / ${ROLES_PER_ORG} + 1)::text, '' from generate_series(1, ${roles}) r`,
    ],
    [
      'role grants (create_role, edit, create_team)',
      `${ins} select 'organization', ((r - 1) / ${ROLES_PER_ORG} + 1)::text, g, 'role', r::text, 'assignee'
         from generate_series(1, ${roles}) r, unnest(array['create_role', 'edit', 'create_team']) g`,
    ],
    [
      'teams assigned to roles',
      `${ins} select 'role', (((t - 1) / ${TEAMS_PER_ORG}) * ${ROLES_PER_ORG} + (t % ${ROLES_PER_ORG}) + 1)::text, 'assignee', 'team', t::text, 'member'
         from generate_series(1, ${teams}) t`,
    ],
  ];
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

// Half the checks ask about a member of one of the org's teams (allowed through team -> role -> org),
// half about a random user (mostly denied, which walks every path).
const question = (i: number) => {
  const org = ((i * 7) % ORGS) + 1;
  const team = (org - 1) * TEAMS_PER_ORG + (i % TEAMS_PER_ORG) + 1;
  const user = i % 2 === 0 ? (((team * MEMBERS_PER_TEAM + (i % MEMBERS_PER_TEAM)) * 7919) % USERS) + 1 : ((i * 104729) % USERS) + 1;
  return { user: `user:${user}`, relation: 'create_role', object: `organization:${org}` };
};

/** A full collection, so heap figures count what is kept (the runner starts node without --expose-gc). */
function collect(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

/** Heap and resident memory in MB, after a full collection. */
function memoryMb() {
  collect();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapMb: Math.round(heapUsed / 2 ** 20), rssMb: Math.round(rss / 2 ** 20) };
}

/** Sequential latencies and throughput, then throughput with CONCURRENCY checks at a time. */
async function measure(name: string, engine: EmbeddedEngine) {
  for (let i = 0; i < 500; i++) await engine.check(question(i + CHECKS)); // warm-up: plans and buffers
  log(`${name}: running ${CHECKS.toLocaleString()} sequential checks`);
  const latencies: number[] = [];
  let allowed = 0;
  let started = performance.now();
  for (let i = 0; i < CHECKS; i++) {
    const t0 = performance.now();
    if (await engine.check(question(i))) allowed++;
    latencies.push(performance.now() - t0);
  }
  const sequentialSeconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  log(`${name}: running ${CHECKS.toLocaleString()} checks, ${CONCURRENCY} at a time`);
  started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CHECKS) await engine.check(question(next++));
    }),
  );
  const concurrentSeconds = (performance.now() - started) / 1000;
  const result = {
    allowed,
    p50Ms: +percentile(latencies, 50).toFixed(3),
    p99Ms: +percentile(latencies, 99).toFixed(3),
    sequentialChecksPerSecond: Math.round(CHECKS / sequentialSeconds),
    concurrentChecksPerSecond: Math.round(CHECKS / concurrentSeconds),
  };
  log(
    `${name}: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ${result.sequentialChecksPerSecond}/s, ${result.concurrentChecksPerSecond}/s concurrent`,
  );
  return result;
}

/** An engine reading tuples from memory, loaded; with the load's time. */
async function loaded(db: Database, model: TypeSystem, freshness: 'strict' | 'local') {
  // Memory mode whatever the bound of tuples in memory (1M tuples is past its default: bench/authz-scale.ts measures both).
  const engine = new EmbeddedEngine(db, model, { memory: { freshness, maxTuples: Number.MAX_SAFE_INTEGER - 1 } });
  const started = performance.now();
  await engine.load();
  const loadSeconds = +((performance.now() - started) / 1000).toFixed(2);
  log(`loaded ${engine.inMemory!.size!.toLocaleString()} tuples into memory in ${loadSeconds} s (${freshness})`);
  return { engine, loadSeconds };
}

async function main(): Promise<void> {
  const server = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const url = await freshDatabase('bench_authz', server);
  const db = await openDatabase({ url, dataDir: '', schema: 'authz', poolMax: CONCURRENCY + 2 });
  await db.migrate(authzMigrations);
  const steps = seedSteps(db.schema);
  const started = performance.now();
  for (const [i, [what, sql]] of steps.entries()) {
    const res = await db.knex.raw(sql);
    log(`seeding ${i + 1}/${steps.length}: ${what} (${res.rowCount.toLocaleString()} tuples)`);
  }
  await db.knex.raw(`analyze ${db.schema}.tuples`);
  const [{ count }] = (await db.knex.raw(`select count(*)::int as count from ${db.schema}.tuples`)).rows;
  const seedSeconds = +((performance.now() - started) / 1000).toFixed(1);
  log(`seeded ${count.toLocaleString()} tuples in ${seedSeconds}s`);

  const model = TypeSystem.fromFile();
  const before = memoryMb();
  const strict = await loaded(db, model, 'strict');
  const after = memoryMb();
  log(`memory: heap ${before.heapMb} -> ${after.heapMb} MB, resident ${before.rssMb} -> ${after.rssMb} MB`);
  const memoryStrict = await measure('memory, strict', strict.engine);
  strict.engine.close();
  const local = await loaded(db, model, 'local');
  const memoryLocal = await measure('memory, local', local.engine);
  local.engine.close();
  const table = await measure('table', new EmbeddedEngine(db, model, { memory: false }));
  if (memoryStrict.allowed !== table.allowed || memoryLocal.allowed !== table.allowed) {
    throw new Error(
      `answers differ: ${memoryStrict.allowed} / ${memoryLocal.allowed} allowed from memory, ${table.allowed} from the table`,
    );
  }

  const result = {
    tuples: count,
    depth: 'organization#create_role <- role#assignee <- team#member <- user',
    checks: CHECKS,
    allowedShare: +(table.allowed / CHECKS).toFixed(2),
    concurrency: CONCURRENCY,
    seedSeconds,
    loadSeconds: strict.loadSeconds,
    loadSecondsAgain: local.loadSeconds,
    memory: { before, after, heapGrowthMb: after.heapMb - before.heapMb, rssGrowthMb: after.rssMb - before.rssMb },
    memoryStrict,
    memoryLocal,
    table,
    loadAverage: os.loadavg().map((l) => +l.toFixed(1)),
  };
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  await db.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
