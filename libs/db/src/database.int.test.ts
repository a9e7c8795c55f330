import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Knex } from 'knex';
import { createTestDatabase } from '@platform/testing';
import { openDatabase, preparedRows, type Database, type Migration } from './index';

const notes: Migration[] = [
  {
    name: '20260101000000_notes',
    async up(knex: Knex, schema: string) {
      await knex.schema.withSchema(schema).createTable('notes', (t) => {
        t.bigIncrements('id');
        t.text('body').notNullable().unique();
      });
    },
    async down(knex: Knex, schema: string) {
      await knex.schema.withSchema(schema).dropTable('notes');
    },
  },
];

/** Behaviour the real server and the embedded engine must share. */
function databaseBehaviour(open: () => Promise<Database>) {
  let db: Database;
  beforeAll(async () => {
    db = await open();
  });
  afterAll(() => db?.close());

  it('migrates its own schema once; a second run applies nothing', async () => {
    const progress: string[] = [];
    expect(await db.migrate(notes, (m) => progress.push(m))).toEqual(['20260101000000_notes']);
    expect(progress).toEqual(['applying migration 1/1: svc.20260101000000_notes']);
    expect(await db.migrate(notes)).toEqual([]);
    const tables = await db.knex('information_schema.tables').where({ table_schema: 'svc' }).pluck('table_name');
    expect(tables).toEqual(expect.arrayContaining(['notes', 'knex_migrations']));
  });

  it('answers how many rows a delete or an update changed, 0 when none', async () => {
    await db.table('notes').insert({ body: 'counted' });
    expect(await db.table('notes').where({ body: 'nobody' }).delete()).toBe(0);
    expect(await db.table('notes').where({ body: 'nobody' }).update({ body: 'x' })).toBe(0);
    expect(await db.table('notes').where({ body: 'counted' }).update({ body: 'counted' })).toBe(1);
    expect(await db.table('notes').where({ body: 'counted' }).delete()).toBe(1);
  });

  it('returns int8 ids as numbers', async () => {
    const [row] = await db.table('notes').insert({ body: 'first' }).returning('id');
    expect(typeof row.id).toBe('number');
  });

  it('rolls back every step of a failed transaction', async () => {
    await expect(
      db.transaction(async (trx) => {
        await db.table('notes', trx).insert({ body: 'second' });
        await db.table('notes', trx).insert({ body: 'first' }); // unique violation
      }),
    ).rejects.toThrow();
    expect(await db.table('notes').pluck('body')).toEqual(['first']);
  });

  it('runs a read as a prepared statement with the same answers, the same text again included', async () => {
    const sql = `select body from "svc"."notes" where body = ? or id = ? order by body`;
    expect(await preparedRows(db, sql, ['first', -1])).toEqual([{ body: 'first' }]);
    // A second run reuses the statement (on Postgres, by its name on this connection) with other values.
    expect(await preparedRows(db, sql, ['nobody', -1])).toEqual([]);
  });
}

describe('openDatabase on a real Postgres server', () => {
  let drop: () => Promise<void>;
  afterAll(() => drop?.());
  databaseBehaviour(async () => {
    const t = await createTestDatabase();
    drop = t.drop;
    return openDatabase({ url: t.url, dataDir: '', schema: 'svc' });
  });

  describe('reads and writes kept parsed by the server, by their text', () => {
    let t: Awaited<ReturnType<typeof createTestDatabase>>;
    let db: Database;
    beforeAll(async () => {
      t = await createTestDatabase();
      // One connection: every statement below runs on the session whose prepared statements are read.
      db = await openDatabase({ url: t.url, dataDir: '', schema: 'kept', poolMax: 1 });
      await db.knex.raw('create table kept.shapes (id int primary key, a text)');
      await db.table('shapes').insert({ id: 1, a: 'x' });
    });
    afterAll(async () => {
      await db?.close();
      await t?.drop();
    });
    const prepared = async () =>
      (await db.knex.raw<{ rows: { statement: string }[] }>('select statement from pg_prepared_statements')).rows.map((r) => r.statement);
    const read = () => db.table('shapes').where({ id: 1 }).select('*');

    it('prepares a read once on its connection and answers the same rows each time', async () => {
      expect(await read()).toEqual([{ id: 1, a: 'x' }]);
      expect(await read()).toEqual([{ id: 1, a: 'x' }]);
      expect((await prepared()).filter((text) => text.startsWith('select * from "kept"."shapes"'))).toHaveLength(1);
    });

    it('reads a table changed by its own migration with its new columns', async () => {
      await read();
      await db.transaction(async (trx) => {
        await trx.raw("alter table kept.shapes add column b text default 'y'");
        expect(await db.table('shapes', trx).where({ id: 1 }).select('*')).toEqual([{ id: 1, a: 'x', b: 'y' }]);
      });
      expect(await read()).toEqual([{ id: 1, a: 'x', b: 'y' }]);
    });

    it('reads a table another process changed: once again outside a transaction, failing once inside one', async () => {
      await read();
      const other = await openDatabase({ url: t.url, dataDir: '', schema: 'kept' });
      try {
        await other.knex.raw("alter table kept.shapes add column c text default 'z'");
      } finally {
        await other.close();
      }
      expect(await read()).toEqual([{ id: 1, a: 'x', b: 'y', c: 'z' }]);
      const other2 = await openDatabase({ url: t.url, dataDir: '', schema: 'kept' });
      try {
        await other2.knex.raw('alter table kept.shapes drop column c');
      } finally {
        await other2.close();
      }
      await expect(db.transaction((trx) => db.table('shapes', trx).where({ id: 1 }).select('*'))).rejects.toMatchObject({ code: '0A000' });
      expect(await db.transaction((trx) => db.table('shapes', trx).where({ id: 1 }).select('*'))).toEqual([{ id: 1, a: 'x', b: 'y' }]);
    });
  });
});

describe('openDatabase on the embedded engine (PGlite under DATA_DIR)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'db-test-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  // With the result cache on, as the apps open it: the same behaviour, transactions included.
  databaseBehaviour(() => openDatabase({ dataDir, schema: 'svc', resultCacheEntries: 100 }));

  it("never runs another caller's statement inside an open transaction: it waits for the commit or rollback", async () => {
    const db = await openDatabase({ dataDir, schema: 'svc', resultCacheEntries: 100 });
    try {
      let readWhileOpen: Promise<string[]> | undefined;
      await expect(
        db.transaction(async (trx) => {
          await db.table('notes', trx).insert({ body: 'never committed' });
          // Sent from another connection of the pool while this transaction holds the database (a knex query
          // runs once something waits on it).
          readWhileOpen = Promise.resolve(db.table('notes').pluck('body'));
          await new Promise((r) => setTimeout(r, 50));
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(await readWhileOpen).not.toContain('never committed');
      expect(await db.table('notes').pluck('body')).not.toContain('never committed');
    } finally {
      await db.close();
    }
  });

  it('runs concurrent transactions one after another: no update is lost', async () => {
    const db = await openDatabase({ dataDir, schema: 'svc', resultCacheEntries: 100 });
    try {
      await db.table('notes').insert({ body: 'counter:0' });
      // Each reads the counter, waits, and writes it back plus one: interleaved, they would overwrite each other.
      await Promise.all(
        Array.from({ length: 12 }, () =>
          db.transaction(async (trx) => {
            const [body] = await db.table('notes', trx).where('body', 'like', 'counter:%').pluck('body');
            await new Promise((r) => setTimeout(r, 2));
            await db
              .table('notes', trx)
              .where({ body })
              .update({ body: `counter:${Number(body.slice('counter:'.length)) + 1}` });
          }),
        ),
      );
      expect(await db.table('notes').where('body', 'like', 'counter:%').pluck('body')).toEqual(['counter:12']);
      await db.table('notes').where('body', 'like', 'counter:%').delete();
    } finally {
      await db.close();
    }
  });

  it('keeps the data after the process closes and reopens it', async () => {
    const again = await openDatabase({ dataDir, schema: 'svc', resultCacheEntries: 100 });
    try {
      expect(await again.table('notes').pluck('body')).toEqual(['first']);
      expect(await again.migrate(notes)).toEqual([]);
    } finally {
      await again.close();
    }
  });
});

/** A migration making a second table, for a batch of more than one. */
const moreNotes: Migration = {
  name: '20260104000000_more_notes',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('more_notes', (t) => {
      t.increments('id');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('more_notes');
  },
};

describe('migrating to a named migration and rolling back (real Postgres)', () => {
  const steps: Migration[] = [
    notes[0],
    {
      name: '20260102000000_tags',
      async up(knex: Knex, schema: string) {
        await knex.schema.withSchema(schema).createTable('tags', (t) => {
          t.text('name').primary();
        });
      },
      async down(knex: Knex, schema: string) {
        await knex.schema.withSchema(schema).dropTable('tags');
      },
    },
    {
      name: '20260103000000_pinned_notes',
      async up(knex: Knex, schema: string) {
        await knex.schema.withSchema(schema).alterTable('notes', (t) => {
          t.boolean('pinned').notNullable().defaultTo(false);
        });
      },
      async down(knex: Knex, schema: string) {
        await knex.schema.withSchema(schema).alterTable('notes', (t) => {
          t.dropColumn('pinned');
        });
      },
    },
  ];
  const [first, second, third] = steps.map((m) => m.name);
  let db: Database;
  let drop: () => Promise<void>;
  const tables = () =>
    db
      .knex('information_schema.tables')
      .where({ table_schema: 'steps' })
      .whereNot('table_name', 'like', 'knex_%')
      .orderBy('table_name')
      .pluck('table_name');
  const noteColumns = () =>
    db.knex('information_schema.columns').where({ table_schema: 'steps', table_name: 'notes' }).orderBy('column_name').pluck('column_name');

  beforeAll(async () => {
    const t = await createTestDatabase();
    drop = t.drop;
    db = await openDatabase({ url: t.url, dataDir: '', schema: 'steps' });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('migrates up to and including the named migration only', async () => {
    const progress: string[] = [];
    expect(await db.migrate(steps, { to: second, onProgress: (m) => progress.push(m) })).toEqual([first, second]);
    expect(progress).toEqual([`applying migration 1/2: steps.${first}`, `applying migration 2/2: steps.${second}`]);
    expect(await db.migrate(steps, { to: first })).toEqual([]);
    expect(await tables()).toEqual(['notes', 'tags']);
    expect(await noteColumns()).toEqual(['body', 'id']);
  });

  it('applies the rest when no migration is named', async () => {
    await db.table('notes').insert({ body: 'kept' });
    expect(await db.migrate(steps, {})).toEqual([third]);
    expect(await noteColumns()).toEqual(['body', 'id', 'pinned']);
    expect(await db.table('notes').select('body', 'pinned')).toEqual([{ body: 'kept', pinned: false }]);
  });

  it('rolls back, newest first, down to just after the named migration, keeping its rows', async () => {
    const progress: string[] = [];
    expect(await db.rollback(steps, { to: first, onProgress: (m) => progress.push(m) })).toEqual([third, second]);
    expect(progress).toEqual([`rolling back migration 1/2: steps.${third}`, `rolling back migration 2/2: steps.${second}`]);
    expect(await tables()).toEqual(['notes']);
    expect(await noteColumns()).toEqual(['body', 'id']);
    expect(await db.table('notes').pluck('body')).toEqual(['kept']);
    expect(await db.rollback(steps, { to: first })).toEqual([]);
  });

  it('rolls everything back, and the empty schema migrates up again', async () => {
    expect(await db.rollback(steps)).toEqual([first]);
    expect(await tables()).toEqual([]);
    expect(await db.rollback(steps)).toEqual([]);
    expect(await db.migrate(steps)).toEqual([first, second, third]);
    expect(await tables()).toEqual(['notes', 'tags']);
    expect(await noteColumns()).toEqual(['body', 'id', 'pinned']);
  });

  it('refuses a migration name that is not in the list, changing nothing', async () => {
    await expect(db.migrate(steps, { to: '20260104000000_unknown' })).rejects.toThrow('no migration named 20260104000000_unknown');
    await expect(db.rollback(steps, { to: '20260104000000_unknown' })).rejects.toThrow('no migration named 20260104000000_unknown');
    expect(await tables()).toEqual(['notes', 'tags']);
  });

  it('applies a batch whole or not at all: a failing migration leaves the ones before it in the batch unapplied', async () => {
    const failing: Migration = {
      name: '20260105000000_fails',
      async up(knex: Knex, schema: string) {
        await knex.raw('select * from ??.no_such_table', [schema]);
      },
      async down() {},
    };
    const withFailing: Migration[] = [...steps, moreNotes, failing];
    await expect(db.migrate(withFailing)).rejects.toThrow(/no_such_table/);
    expect(await tables()).toEqual(['notes', 'tags']);
    expect(await db.knex('steps.knex_migrations').orderBy('id').pluck('name')).toEqual([first, second, third]);
    // Without the failing one the batch goes in, and the migrator is not left locked.
    expect(await db.migrate(withFailing.slice(0, -1))).toEqual(['20260104000000_more_notes']);
    expect(await tables()).toEqual(['more_notes', 'notes', 'tags']);
  });
});
