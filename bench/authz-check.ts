/**
 * Authz check benchmark: the embedded engine over ~1M tuples with nested team/role depth 3
 * (organization#create_role <- role#assignee <- team#member <- user). Reports p50/p99 check latency and
 * checks per second, sequential and concurrent. Seeds a fresh database `bench_authz` on BENCH_DATABASE_URL
 * (default: TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test).
 */
import { performance } from 'node:perf_hooks';
import { openDatabase } from '@platform/db';
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

async function main(): Promise<void> {
  const server = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const url = await freshDatabase('bench_authz', server);
  const db = await openDatabase({ url, dataDir: '', schema: 'authz', poolMax: CONCURRENCY + 2 });
  await db.migrate(authzMigrations);
  const steps = seedSteps(db.schema);
  let started = performance.now();
  for (const [i, [what, sql]] of steps.entries()) {
    const res = await db.knex.raw(sql);
    log(`seeding ${i + 1}/${steps.length}: ${what} (${res.rowCount.toLocaleString()} tuples)`);
  }
  await db.knex.raw(`analyze ${db.schema}.tuples`);
  const [{ count }] = (await db.knex.raw(`select count(*)::int as count from ${db.schema}.tuples`)).rows;
  log(`seeded ${count.toLocaleString()} tuples in ${((performance.now() - started) / 1000).toFixed(1)}s`);

  const engine = new EmbeddedEngine(db, TypeSystem.fromFile());
  // Half the checks ask about a member of one of the org's teams (allowed through team -> role -> org),
  // half about a random user (mostly denied, which walks every path).
  const question = (i: number) => {
    const org = ((i * 7) % ORGS) + 1;
    const team = (org - 1) * TEAMS_PER_ORG + (i % TEAMS_PER_ORG) + 1;
    const user = i % 2 === 0 ? (((team * MEMBERS_PER_TEAM + (i % MEMBERS_PER_TEAM)) * 7919) % USERS) + 1 : ((i * 104729) % USERS) + 1;
    return { user: `user:${user}`, relation: 'create_role', object: `organization:${org}` };
  };
  for (let i = 0; i < 500; i++) await engine.check(question(i + CHECKS)); // warm-up: plans and buffers

  log(`running ${CHECKS.toLocaleString()} sequential checks`);
  const latencies: number[] = [];
  let allowed = 0;
  started = performance.now();
  for (let i = 0; i < CHECKS; i++) {
    const t0 = performance.now();
    if (await engine.check(question(i))) allowed++;
    latencies.push(performance.now() - t0);
    if ((i + 1) % 2_500 === 0) log(`  ${i + 1}/${CHECKS}`);
  }
  const sequentialSeconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);

  log(`running ${CHECKS.toLocaleString()} checks, ${CONCURRENCY} at a time`);
  started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CHECKS) await engine.check(question(next++));
    }),
  );
  const concurrentSeconds = (performance.now() - started) / 1000;

  const result = {
    tuples: count,
    depth: 'organization#create_role <- role#assignee <- team#member <- user',
    checks: CHECKS,
    allowedShare: +(allowed / CHECKS).toFixed(2),
    p50Ms: +percentile(latencies, 50).toFixed(2),
    p99Ms: +percentile(latencies, 99).toFixed(2),
    sequentialChecksPerSecond: Math.round(CHECKS / sequentialSeconds),
    concurrentChecksPerSecond: Math.round(CHECKS / concurrentSeconds),
    concurrency: CONCURRENCY,
  };
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  await db.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
