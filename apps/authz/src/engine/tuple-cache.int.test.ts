import { metricsText } from '@platform/telemetry';
import { CheckResolver } from './check';
import type { EmbeddedEngine, EmbeddedEngineOptions } from './embedded-engine';
import { answer, memorySource, MIXED_DSL, random, randomQuestions, randomTuples } from './test/random-tuples';
import { openEngineDatabase } from './test/engine-db';
import type { TupleSource } from './source';
import { TUPLES_TABLE, TupleStore } from './tuple-store';
import type { Tuple } from './types';

// More tuples than memory may hold (a tiny AUTHZ_MEMORY_TUPLES_MAX here): checks read the table through a bounded
// cache, which the change log keeps as fresh as the tuples in memory are, and which never holds more than its bound.
const MODEL = `model
  schema 1.1
type user
type team
  relations
    define member: [user, user:*]
type role
  relations
    define assignee: [user, team#member]
type org
  relations
    define owner: [user]
    define create: [role#assignee] or owner
`;

const BOUNDED: EmbeddedEngineOptions = { memory: { maxTuples: 10, cacheTuples: 20 } };
const t = (user: string, relation: string, object: string): Tuple => ({ user, relation, object });
const can = (engine: EmbeddedEngine, user: string, relation: string, object: string) => engine.check({ user, relation, object });
/** `count` members of a team. */
const members = (count: number, team = 'team:big', from = 0) =>
  Array.from({ length: count }, (_, i) => t(`user:u${from + i}`, 'member', team));

let database: Awaited<ReturnType<typeof openEngineDatabase>>;

beforeAll(async () => {
  database = await openEngineDatabase();
});
afterAll(async () => {
  await database?.close();
});

/** Two replicas over one fresh schema holding `tuples`, loaded with the tiny bound. */
async function twoReplicas(tuples: Tuple[], options = BOUNDED, modelDsl = MODEL) {
  const first = await database.engine(modelDsl, options);
  if (tuples.length) await first.engine.write(tuples, []);
  const second = await database.replica(first.schema, modelDsl, options);
  await Promise.all([first.engine.load(), second.engine.load()]);
  return {
    a: first.engine,
    b: second.engine,
    db: first.db,
    schema: first.schema,
    async dispose() {
      second.engine.close();
      await second.db.close();
      await first.dispose();
    },
  };
}

describe('table mode', () => {
  it('is where a replica starts when the table holds more tuples than the bound, and memory mode when it holds fewer', async () => {
    const small = await twoReplicas(members(10));
    try {
      expect(small.b.inMemory!.mode).toBe('memory');
      expect(small.b.inMemory!.size).toBe(10);
    } finally {
      await small.dispose();
    }
    const large = await twoReplicas(members(11));
    try {
      expect(large.b.inMemory!.mode).toBe('table');
      expect(large.b.inMemory!.size).toBeUndefined();
      expect(await can(large.b, 'user:u10', 'member', 'team:big')).toBe(true);
      expect(await can(large.b, 'user:u11', 'member', 'team:big')).toBe(false);
    } finally {
      await large.dispose();
    }
  });

  it('answers at once after writes and deletes, by this replica or another', async () => {
    const { a, b, db, dispose } = await twoReplicas([...members(20), t('team:big#member', 'assignee', 'role:r')]);
    try {
      expect([a.inMemory!.mode, b.inMemory!.mode]).toEqual(['table', 'table']);
      // Read (and kept) before each change, so a stale entry would answer.
      expect(await can(a, 'user:u3', 'create', 'org:acme')).toBe(false);
      expect(await can(b, 'user:u3', 'create', 'org:acme')).toBe(false);
      await b.write([t('role:r#assignee', 'create', 'org:acme')], []);
      expect(await can(a, 'user:u3', 'create', 'org:acme')).toBe(true);
      expect(await can(b, 'user:u3', 'create', 'org:acme')).toBe(true);

      await a.write([], [t('user:u3', 'member', 'team:big')]);
      expect(await can(b, 'user:u3', 'create', 'org:acme')).toBe(false);
      expect(await can(a, 'user:u3', 'create', 'org:acme')).toBe(false);
      expect(await can(b, 'user:u4', 'create', 'org:acme')).toBe(true);

      await b.write([t('user:*', 'member', 'team:big')], []);
      expect(await can(a, 'user:anyone', 'create', 'org:acme')).toBe(true);
      await a.write([], [t('role:r#assignee', 'create', 'org:acme')]);
      expect(await can(b, 'user:u4', 'create', 'org:acme')).toBe(false);
      expect(await can(a, 'user:anyone', 'create', 'org:acme')).toBe(false);

      // A change made by hand, outside any engine, counts too.
      await b.write([t('user:ann', 'owner', 'org:acme')], []);
      expect(await can(a, 'user:ann', 'create', 'org:acme')).toBe(true);
      await db.table(TUPLES_TABLE).where({ object_type: 'org', object_id: 'acme', relation: 'owner', user_id: 'ann' }).del();
      expect(await can(a, 'user:ann', 'create', 'org:acme')).toBe(false);
    } finally {
      await dispose();
    }
  });

  it('keeps no answer of a table read that a change overtook while it was on its way', async () => {
    const { a, b, dispose } = await twoReplicas(members(20));
    const original = TupleStore.prototype.readUsers;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let read!: () => void;
    const reading = new Promise<void>((resolve) => (read = resolve));
    const spy = jest.spyOn(TupleStore.prototype, 'readUsers').mockImplementationOnce(async function (this: TupleStore, reads) {
      const found = await original.call(this, reads);
      read();
      await gate; // held back until the change below has been applied
      return found;
    });
    try {
      const asked = can(a, 'user:new', 'member', 'team:big');
      await reading;
      await b.write([t('user:new', 'member', 'team:big')], []);
      await a.inMemory!.catchUp();
      release();
      expect(await asked).toBe(false); // asked before the write
      expect(await can(a, 'user:new', 'member', 'team:big')).toBe(true);
    } finally {
      spy.mockRestore();
      await dispose();
    }
  });

  it('never holds more than its bound, and reports its lookups, size and bound in /metrics', async () => {
    const { a, dispose } = await twoReplicas([
      ...Array.from({ length: 40 }, (_, i) => t(`user:u${i}`, 'member', `team:${i % 8}`)),
      ...Array.from({ length: 8 }, (_, i) => t(`team:${i}#member`, 'assignee', `role:${i}`)),
    ]);
    try {
      const cache = () => a.inMemory!.cache!;
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 40; i++) {
          expect(await can(a, `user:u${i}`, 'assignee', `role:${i % 8}`)).toBe(true);
          expect(await can(a, `user:u${i}`, 'assignee', `role:${(i + 1) % 8}`)).toBe(false);
          expect(cache().size).toBeLessThanOrEqual(20);
        }
      }
      expect(cache().size).toBeGreaterThan(10);
      const { body } = await metricsText();
      const value = (series: string) =>
        Number(
          body
            .split('\n')
            .find((l) => l.startsWith(`${series} `))
            ?.split(' ')[1],
        );
      expect(value('cache_lookups_total{cache="authz.tuples",result="hit"}')).toBeGreaterThan(0);
      expect(value('cache_lookups_total{cache="authz.tuples",result="miss"}')).toBeGreaterThan(0);
      expect(value('cache_evictions_total{cache="authz.tuples",cause="size"}')).toBeGreaterThan(0);
      // Every engine open in this process adds its own; here the two replicas, both in table mode.
      expect(value('cache_max_entries{cache="authz.tuples"}')).toBe(40);
      expect(value('cache_entries{cache="authz.tuples"}')).toBeLessThanOrEqual(40);
      expect(value('authz_memory_tuples_max')).toBe(20);
      expect(value('authz_memory_tuples')).toBe(0);
    } finally {
      await dispose();
    }
  });

  /**
   * What the table holds now, read once, as a source the reference walk reads in memory: the same tuples as a walk
   * over the table would read, without a round trip for each of its reads (OpenFGA's suites hold the table's walk to
   * the memory's).
   */
  async function tableNow(table: TupleStore): Promise<TupleSource> {
    const rows = await table.readPage(undefined, 100_000);
    return memorySource(
      rows.map((r) => ({
        object: { type: r.object_type, id: r.object_id },
        relation: r.relation,
        user: { type: r.user_type, id: r.user_id, relation: r.user_relation },
      })),
    );
  }

  it('answers as the walk over the table’s tuples does on random tuples, changed by two replicas', async () => {
    let compared = 0;
    let allowed = 0;
    for (let seed = 1; seed <= 4; seed++) {
      const { a, b, db, dispose } = await twoReplicas([], { memory: { maxTuples: 10, cacheTuples: 30 } }, MIXED_DSL);
      try {
        const next = random(seed);
        const tuples = randomTuples(a.model, next, 120);
        const half = Math.floor(tuples.length / 2);
        await a.write(tuples.slice(0, half), []);
        await b.write(tuples.slice(half), []);
        const table = TupleStore.create(db);
        const { objects, users } = randomQuestions(a.model, next);
        for (const [step, engine] of [a, b, a].entries()) {
          if (step > 0) {
            // Between rounds, a third of the tuples go (or come back), alternately by each replica.
            const some = tuples.filter(() => next() < 0.33);
            await (step === 1 ? a : b).write([], some, { idempotent: true });
            await (step === 1 ? b : a).write(
              some.filter(() => next() < 0.5),
              [],
              { idempotent: true },
            );
          }
          expect(engine.inMemory!.mode).toBe('table');
          const stored = await tableNow(table);
          for (const { object, relation } of objects) {
            for (const user of users) {
              const expected = await answer(new CheckResolver(a.model, stored), object, relation, user);
              const got = await engine.check({ user, relation, object }).then(String, (err: Error) => err.constructor.name);
              if (got !== expected)
                expect({ seed, step, object, relation, user, got }).toEqual({ seed, step, object, relation, user, got: expected });
              if (expected === 'true') allowed++;
              compared++;
            }
          }
        }
      } finally {
        await dispose();
      }
    }
    expect(allowed).toBeGreaterThan(compared / 20);
  });
});

describe('switching modes', () => {
  it('leaves memory for the table once writes pass the bound, and comes back once deletes bring the table under it', async () => {
    const { a, b, dispose } = await twoReplicas(members(8));
    try {
      expect(b.inMemory!.mode).toBe('memory');
      await a.write(members(5, 'team:big', 8), []);
      expect(await can(b, 'user:u12', 'member', 'team:big')).toBe(true);
      expect(b.inMemory!.mode).toBe('table');

      // 13 tuples; back in memory at 9 (90 % of the bound) or fewer.
      await a.write([], members(3));
      expect(await can(b, 'user:u3', 'member', 'team:big')).toBe(true);
      expect(b.inMemory!.mode).toBe('table');
      await a.write([], members(1, 'team:big', 3));
      expect(await can(b, 'user:u3', 'member', 'team:big')).toBe(false);
      await b.inMemory!.settled();
      expect(b.inMemory!.mode).toBe('memory');
      expect(b.inMemory!.size).toBe(9);
      expect(await can(b, 'user:u12', 'member', 'team:big')).toBe(true);
      expect(await can(b, 'user:u0', 'member', 'team:big')).toBe(false);
    } finally {
      await dispose();
    }
  });
});
