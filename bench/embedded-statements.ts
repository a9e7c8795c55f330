/**
 * `npm run bench -- embedded-statements`: what one statement costs the embedded database (PGlite in its worker,
 * `@platform/db`) when the engine keeps it parsed, beside the same statement parsed, analysed and planned each time it
 * runs (`keptStatements: 0`), as a route's writes and reads send them: through a worker session, parameters plain,
 * one statement after another. Modes alternate over BENCH_ROUNDS rounds of BENCH_STATEMENTS statements each, so a busy
 * neighbour hurts both alike; each row reports the median round. Writes its table into docs/benchmarks.md.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openPGliteWorker, type PGliteLike, type PGliteWorker } from '@platform/db';
import { runLine, writeDocBlock } from './doc-block';

const STATEMENTS = Number(process.env.BENCH_STATEMENTS ?? 2_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const progress = (msg: string) => process.stderr.write(`[bench embedded-statements] ${msg}\n`);

/** Statements shaped as the platform's: a one-row insert answering its row, a keyed read with a join, a WITH write. */
const SHAPES: { label: string; sql: string; params: (i: number) => unknown[] }[] = [
  {
    label: 'one-row `INSERT ... RETURNING *`',
    sql: 'insert into "bench"."accounts" ("login", "full_name", "visibility", "created_unix") values ($1, $2, $3, $4) returning *',
    params: (i) => [`account-${process.hrtime.bigint()}-${i}`, 'A name', 0, 1_700_000_000 + i],
  },
  {
    label: 'a keyed read with a join',
    sql: 'select "a".*, "t"."name" as "team" from "bench"."accounts" as "a" left join "bench"."teams" as "t" on "t"."org_id" = "a"."id" where "a"."id" = $1 limit $2',
    params: (i) => [1 + (i % 100), 1],
  },
  {
    label: 'a `WITH` write of two rows',
    sql: 'with "a" as (insert into "bench"."teams" ("org_id", "name") values ($1, $2) returning "id") insert into "bench"."members" ("team_id", "user_id") select "id", $3 from "a" returning *',
    params: (i) => [1 + (i % 100), `team-${process.hrtime.bigint()}-${i}`, i],
  },
];

async function open(kept: number | undefined): Promise<{ worker: PGliteWorker; session: PGliteLike; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-embedded-statements-'));
  const worker = openPGliteWorker(dir, kept === undefined ? {} : { keptStatements: kept });
  await worker.waitReady;
  const session = worker.session();
  for (const sql of [
    'create schema "bench"',
    'create table "bench"."accounts" ("id" serial primary key, "login" text unique not null, "full_name" text, "visibility" int, "created_unix" bigint)',
    'create table "bench"."teams" ("id" serial primary key, "org_id" int not null, "name" text not null, unique ("org_id", "name"))',
    'create table "bench"."members" ("team_id" int not null, "user_id" int not null, primary key ("team_id", "user_id"))',
  ])
    await session.query(sql, [], {});
  for (let i = 0; i < 100; i++) await session.query(SHAPES[0].sql, SHAPES[0].params(i), {});
  return { worker, session, dir };
}

/** Microseconds one statement of `shape` takes, run STATEMENTS times one after another. */
async function perStatement(session: PGliteLike, shape: (typeof SHAPES)[number]): Promise<number> {
  const began = performance.now();
  for (let i = 0; i < STATEMENTS; i++) await session.query(shape.sql, shape.params(i), {});
  return ((performance.now() - began) * 1000) / STATEMENTS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const modes = { parsed: await open(0), kept: await open(undefined) };
  const rows: { label: string; parsed: number; kept: number }[] = [];
  try {
    for (const shape of SHAPES) {
      const times: Record<'parsed' | 'kept', number[]> = { parsed: [], kept: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const mode of ['parsed', 'kept'] as const) times[mode].push(await perStatement(modes[mode].session, shape));
        progress(
          `${shape.label}: round ${round + 1}/${ROUNDS}: parsed each time ${Math.round(times.parsed[round])} µs, kept ${Math.round(times.kept[round])} µs`,
        );
      }
      rows.push({ label: shape.label, parsed: median(times.parsed), kept: median(times.kept) });
    }
  } finally {
    for (const { worker, dir } of Object.values(modes)) {
      await worker.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  writeDocBlock(
    'embedded-statements',
    [
      runLine(`${STATEMENTS} statements a round, ${ROUNDS} rounds, the median round; through a worker session, one after another.`),
      '',
      '| statement | parsed each time | kept parsed | kept / parsed |',
      '|---|---|---|---|',
      ...rows.map(
        (r) => `| ${r.label} | ${Math.round(r.parsed)} µs | ${Math.round(r.kept)} µs | ${Math.round((r.kept / r.parsed) * 100)}% |`,
      ),
    ].join('\n'),
  );
  console.log(JSON.stringify({ statements: STATEMENTS, rounds: ROUNDS, rows }, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
