import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Knex } from 'knex';
import { openDatabase, type Database } from '@platform/db';
import { CheckResolver } from './check';
import { EmbeddedEngine } from './embedded-engine';
import { TypeSystem } from './model';
import { answer, MIXED_DSL, random, randomQuestions, randomTuples } from './test/random-tuples';
import { ENGINE_MIGRATIONS, openEngineDatabase } from './test/engine-db';
import { TUPLES_TABLE, TupleStore, type TupleRow } from './tuple-store';
import type { Tuple } from './types';

// Checks answered from the tuples in memory: the same answers as the walk over the table, and every committed
// change (made by this engine, another replica, a unit of work's transaction or a statement by hand) counted
// by the next check on every replica.
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

const t = (user: string, relation: string, object: string): Tuple => ({ user, relation, object });

let database: Awaited<ReturnType<typeof openEngineDatabase>>;

beforeAll(async () => {
  database = await openEngineDatabase();
});
afterAll(async () => {
  await database?.close();
});

/** Two loaded replicas over one fresh schema. */
async function twoReplicas(modelDsl = MODEL) {
  const first = await database.engine(modelDsl);
  const second = await database.replica(first.schema, modelDsl);
  await Promise.all([first.engine.load(), second.engine.load()]);
  return {
    a: first.engine,
    b: second.engine,
    db: first.db,
    schema: first.schema,
    async dispose() {
      second.engine.close();
      await first.dispose();
    },
  };
}

const keyOf = (r: TupleRow) => [r.object_type, r.object_id, r.relation, r.user_type, r.user_relation, r.user_id].join(' ');

/** The tuples in the table, as sorted keys. */
async function tableKeys(db: Database): Promise<string[]> {
  const rows: TupleRow[] = await db
    .table(TUPLES_TABLE)
    .select('object_type', 'object_id', 'relation', 'user_type', 'user_id', 'user_relation');
  return rows.map(keyOf).sort();
}

/** The tuples an engine holds in memory, as sorted keys. */
const memoryKeys = (engine: EmbeddedEngine) => engine.inMemory!.rows().map(keyOf).sort();

/** The same database with every query inside `trx`, as the roles' unit of work binds its engine. */
function boundTo(db: Database, trx: Knex.Transaction): Database {
  return { ...db, knex: trx, table: (name, x) => db.table(name, x ?? trx), transaction: (fn) => trx.transaction(fn) };
}

/** Counts the statements checks send: log reads and tuple reads. */
function countReads() {
  const changes = jest.spyOn(TupleStore.prototype, 'readChanges');
  const users = jest.spyOn(TupleStore.prototype, 'readUsers');
  return {
    get changes() {
      return changes.mock.calls.length;
    },
    get tuples() {
      return users.mock.calls.length;
    },
    restore() {
      changes.mockRestore();
      users.mockRestore();
    },
  };
}

describe('answers from memory', () => {
  it.each([
    ['the platform model', undefined, 3, 150],
    ['a model mixing recursion, intersection and exclusion', MIXED_DSL, 6, 120],
  ])('are those of the walk over the table on random tuples of %s, changed by two replicas', async (_name, dsl, seeds, count) => {
    let allowed = 0;
    let compared = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const { a, b, db, dispose } = await twoReplicas(dsl);
      try {
        const next = random(seed);
        const tuples = randomTuples(a.model, next, count);
        // Half written by each replica; a third deleted, alternately by each; some of those written again.
        const half = Math.floor(tuples.length / 2);
        await a.write(tuples.slice(0, half), []);
        await b.write(tuples.slice(half), []);
        const gone = tuples.filter(() => next() < 0.33);
        await a.write(
          [],
          gone.filter((_, i) => i % 2 === 0),
        );
        await b.write(
          [],
          gone.filter((_, i) => i % 2 === 1),
        );
        await a.write(
          gone.filter(() => next() < 0.5),
          [],
        );
        await b.inMemory!.catchUp();
        expect(memoryKeys(a)).toEqual(await tableKeys(db));
        expect(memoryKeys(b)).toEqual(await tableKeys(db));

        const table = TupleStore.create(db);
        const { objects, users } = randomQuestions(a.model, next);
        for (const { object, relation } of objects) {
          for (const user of users) {
            const expected = await answer(new CheckResolver(a.model, table), object, relation, user);
            const got = await a.check({ user, relation, object }).then(String, (err: Error) => err.constructor.name);
            if (got !== expected) expect({ seed, object, relation, user, got }).toEqual({ seed, object, relation, user, got: expected });
            if (expected === 'true') allowed++;
            compared++;
          }
        }
      } finally {
        await dispose();
      }
    }
    // The random tuples grant enough for the comparison to mean something.
    expect(allowed).toBeGreaterThan(compared / 20);
  });

  it('reads no tuple from the table, and the log once per check or batch', async () => {
    const { a, dispose } = await twoReplicas();
    try {
      await a.write(
        [t('role:r#assignee', 'create', 'org:acme'), t('team:1#member', 'assignee', 'role:r'), t('user:m', 'member', 'team:1')],
        [],
      );
      const reads = countReads();
      try {
        expect(await a.check({ user: 'user:m', relation: 'create', object: 'org:acme' })).toBe(true);
        expect(await a.check({ user: 'user:x', relation: 'create', object: 'org:acme' })).toBe(false);
        expect(reads).toMatchObject({ tuples: 0, changes: 2 });
        expect(await a.listRelations('user:m', 'org:acme', ['owner', 'create'])).toEqual(['create']);
        expect(reads).toMatchObject({ tuples: 0, changes: 3 });
      } finally {
        reads.restore();
      }
    } finally {
      await dispose();
    }
  });

  it('shares one log read among the checks that arrive while another is on its way', async () => {
    const { a, dispose } = await twoReplicas();
    try {
      await a.write([t('user:m', 'owner', 'org:acme')], []);
      const reads = countReads();
      try {
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) => a.check({ user: `user:${i % 2 ? 'm' : 'x'}`, relation: 'create', object: 'org:acme' })),
        );
        expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => i % 2 === 1));
        // The first check's read, then one for all who came while it was on its way.
        expect(reads.changes).toBe(2);
      } finally {
        reads.restore();
      }
    } finally {
      await dispose();
    }
  });
});

describe('changes reach every replica before its next check', () => {
  let replicas: Awaited<ReturnType<typeof twoReplicas>>;
  beforeEach(async () => {
    replicas = await twoReplicas();
  });
  afterEach(async () => {
    await replicas.dispose();
  });
  const can = (engine: EmbeddedEngine, user: string, relation: string, object: string) => engine.check({ user, relation, object });

  it('a write acknowledged by one replica counts at once on the other, and so does a revocation', async () => {
    const { a, b } = replicas;
    await b.write(
      [t('role:r#assignee', 'create', 'org:acme'), t('team:1#member', 'assignee', 'role:r'), t('user:m', 'member', 'team:1')],
      [],
    );
    expect(await can(a, 'user:m', 'create', 'org:acme')).toBe(true);
    await a.write([], [t('user:m', 'member', 'team:1')]);
    expect(await can(b, 'user:m', 'create', 'org:acme')).toBe(false);
    await b.write([t('user:*', 'member', 'team:1')], []);
    expect(await can(a, 'user:anyone', 'create', 'org:acme')).toBe(true);
  });

  it("answers a write's question about an object's users from memory, another replica's earlier writes included", async () => {
    const { a, b, schema } = replicas;
    await b.write([t('team:1#member', 'assignee', 'role:r'), t('user:u', 'assignee', 'role:r')], []);
    await a.write([t('user:m', 'member', 'team:1')], []);
    expect((await a.keptUsers('role:r', 'assignee'))?.sort()).toEqual(['team:1#member', 'user:u']);
    expect(await a.keptUsers('role:none', 'assignee')).toEqual([]);
    // Without the tuples in memory there is nothing to answer from: the caller reads the table.
    const tableOnly = await database.replica(schema, MODEL, { memory: false });
    expect(await tableOnly.engine.keptUsers('role:r', 'assignee')).toBeUndefined();
  });

  it('a change of many tuples arrives whole, past what the first read of the log takes', async () => {
    const { a, b, db } = replicas;
    const members = Array.from({ length: 250 }, (_, i) => t(`user:u${i}`, 'member', 'team:big'));
    await b.write([...members, t('team:big#member', 'assignee', 'role:r'), t('role:r#assignee', 'create', 'org:acme')], []);
    expect(await can(a, 'user:u249', 'create', 'org:acme')).toBe(true);
    await b.write([], members.slice(100));
    expect(await can(a, 'user:u249', 'create', 'org:acme')).toBe(false);
    expect(await can(a, 'user:u99', 'create', 'org:acme')).toBe(true);
    expect(memoryKeys(a)).toEqual(await tableKeys(db));
  });

  it("a unit of work's tuples count once its transaction commits, and never when it rolls back", async () => {
    const { a, b, db } = replicas;
    await db.transaction(async (trx) => {
      await new EmbeddedEngine(boundTo(db, trx), a.model).write([t('user:ann', 'owner', 'org:acme')], []);
      // Not committed yet: neither replica counts it.
      expect(await can(a, 'user:ann', 'owner', 'org:acme')).toBe(false);
      expect(await can(b, 'user:ann', 'owner', 'org:acme')).toBe(false);
    });
    expect(await can(a, 'user:ann', 'owner', 'org:acme')).toBe(true);
    expect(await can(b, 'user:ann', 'owner', 'org:acme')).toBe(true);

    await expect(
      db.transaction(async (trx) => {
        await new EmbeddedEngine(boundTo(db, trx), a.model).write([t('user:bob', 'owner', 'org:acme')], []);
        throw new Error('the rows could not be written');
      }),
    ).rejects.toThrow('the rows could not be written');
    // The rolled-back change's number is taken again by the next change, which both replicas see.
    await b.write([t('user:cy', 'owner', 'org:acme')], []);
    expect(await can(a, 'user:bob', 'owner', 'org:acme')).toBe(false);
    expect(await can(a, 'user:cy', 'owner', 'org:acme')).toBe(true);
    expect(memoryKeys(a)).toEqual(await tableKeys(db));
  });

  it('statements made by hand on the table count too: insert, update, delete and truncate', async () => {
    const { a, db } = replicas;
    const row = { object_type: 'org', object_id: 'acme', relation: 'owner', user_type: 'user', user_id: 'ann', user_relation: '' };
    await db.table(TUPLES_TABLE).insert(row);
    expect(await can(a, 'user:ann', 'create', 'org:acme')).toBe(true);
    await db.table(TUPLES_TABLE).where(row).update({ user_id: 'bob' });
    expect(await can(a, 'user:ann', 'create', 'org:acme')).toBe(false);
    expect(await can(a, 'user:bob', 'create', 'org:acme')).toBe(true);
    await db
      .table(TUPLES_TABLE)
      .where({ ...row, user_id: 'bob' })
      .del();
    expect(await can(a, 'user:bob', 'create', 'org:acme')).toBe(false);
    await a.write([t('user:cy', 'owner', 'org:acme'), t('user:dee', 'owner', 'org:other')], []);
    await db.knex.raw(`truncate "${db.schema}".${TUPLES_TABLE}`);
    expect(await can(a, 'user:cy', 'create', 'org:acme')).toBe(false);
    expect(memoryKeys(a)).toEqual([]);
  });

  it('concurrent writers on both replicas leave both memories equal to the table', async () => {
    const { a, b, db } = replicas;
    const writes = Array.from({ length: 30 }, (_, i) =>
      (i % 2 ? a : b).write([t(`user:u${i}`, 'member', `team:${i % 4}`), t(`team:${i % 4}#member`, 'assignee', `role:${i}`)], [], {
        idempotent: true,
      }),
    );
    const deletes = Array.from({ length: 10 }, (_, i) =>
      (i % 2 ? b : a).write([], [t(`user:u${i * 3}`, 'member', `team:${(i * 3) % 4}`)], { idempotent: true }),
    );
    await Promise.all([...writes, ...deletes]);
    await a.check({ user: 'user:x', relation: 'member', object: 'team:0' });
    await b.check({ user: 'user:x', relation: 'member', object: 'team:0' });
    expect(memoryKeys(a)).toEqual(await tableKeys(db));
    expect(memoryKeys(b)).toEqual(await tableKeys(db));
  });
});

describe('loading', () => {
  it('ends with the table as it is, however the table changed while the pages were read', async () => {
    const { engine: writer, db, schema, dispose } = await database.engine(MODEL, { memory: false });
    try {
      await writer.write(
        Array.from({ length: 200 }, (_, i) => t(`user:u${i}`, 'member', `team:${i % 7}`)),
        [],
      );
      const { engine: loader } = await database.replica(schema, MODEL, { memory: { pageSize: 7 } });
      const loading = loader.load();
      for (let i = 0; i < 20; i++) {
        await writer.write([t(`user:n${i}`, 'member', `team:${i % 7}`)], [t(`user:u${i * 9}`, 'member', `team:${(i * 9) % 7}`)]);
      }
      await loading;
      await loader.check({ user: 'user:x', relation: 'member', object: 'team:0' });
      expect(memoryKeys(loader)).toEqual(await tableKeys(db));
      loader.close();
    } finally {
      await dispose();
    }
  });

  it('loads again when the log was pruned past what a replica applied, answering from the table meanwhile', async () => {
    const { a, b, db, dispose } = await twoReplicas();
    try {
      // b, idle, has read nothing of the log since it loaded; a writes, then the whole log is pruned.
      await a.write([t('user:ann', 'owner', 'org:acme'), t('user:bob', 'owner', 'org:acme')], []);
      await a.write([t('user:cy', 'owner', 'org:acme')], [t('user:ann', 'owner', 'org:acme')]);
      await TupleStore.create(db).pruneChanges(0);
      expect(await b.check({ user: 'user:bob', relation: 'create', object: 'org:acme' })).toBe(true);
      await b.load();
      expect(memoryKeys(b)).toEqual(await tableKeys(db));
      expect(await b.check({ user: 'user:cy', relation: 'create', object: 'org:acme' })).toBe(true);
    } finally {
      await dispose();
    }
  });

  it('loads again when more changes wait than it replays', async () => {
    const { engine: a, schema, db, dispose } = await database.engine(MODEL);
    try {
      const { engine: b } = await database.replica(schema, MODEL, { memory: { maxChanges: 3 } });
      await Promise.all([a.load(), b.load()]);
      await a.write(
        Array.from({ length: 5 }, (_, i) => t(`user:u${i}`, 'owner', 'org:acme')),
        [],
      );
      expect(await b.check({ user: 'user:u4', relation: 'create', object: 'org:acme' })).toBe(true);
      await b.load();
      expect(memoryKeys(b)).toEqual(await tableKeys(db));
      b.close();
    } finally {
      await dispose();
    }
  });

  it('leaves checks on the table when the schema has no change log', async () => {
    const { engine: migrated, schema, dispose } = await database.engine(MODEL);
    try {
      const { engine, db } = await database.replica(schema, MODEL);
      await migrated.write([t('user:ann', 'owner', 'org:acme')], []);
      await db.knex.raw(`drop table "${schema}".tuple_changes_head cascade`);
      await expect(engine.load()).rejects.toThrow(/tuple_changes_head/);
      expect(await engine.check({ user: 'user:ann', relation: 'create', object: 'org:acme' })).toBe(true);
      expect(engine.inMemory!.size).toBeUndefined();
    } finally {
      await dispose();
    }
  });
});

describe('on the embedded PGlite (one process holds the database)', () => {
  let dataDir: string;
  let db: Database;
  let engine: EmbeddedEngine;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'authz-memory-'));
    db = await openDatabase({ dataDir, schema: 'authz' });
    await db.migrate(ENGINE_MIGRATIONS);
    engine = new EmbeddedEngine(db, TypeSystem.fromDsl(MODEL));
    await engine.load();
  });
  afterAll(async () => {
    engine?.close();
    await db?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers with no statement at all until a tuple is written in this process', async () => {
    await engine.write([t('user:ann', 'owner', 'org:acme')], []);
    const reads = countReads();
    try {
      expect(await engine.check({ user: 'user:ann', relation: 'create', object: 'org:acme' })).toBe(true);
      expect(await engine.check({ user: 'user:bob', relation: 'create', object: 'org:acme' })).toBe(false);
      expect(reads).toMatchObject({ tuples: 0, changes: 0 });
    } finally {
      reads.restore();
    }
  });

  it("counts a unit of work's tuples once its transaction commits, and never a rolled-back one", async () => {
    await db.transaction(async (trx) => {
      await new EmbeddedEngine(boundTo(db, trx), engine.model).write([t('user:cy', 'owner', 'org:acme')], []);
    });
    expect(await engine.check({ user: 'user:cy', relation: 'create', object: 'org:acme' })).toBe(true);
    await expect(
      db.transaction(async (trx) => {
        await new EmbeddedEngine(boundTo(db, trx), engine.model).write([t('user:dee', 'owner', 'org:acme')], []);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await engine.check({ user: 'user:dee', relation: 'create', object: 'org:acme' })).toBe(false);
    expect(memoryKeys(engine)).toEqual(await tableKeys(db));
  });
});
