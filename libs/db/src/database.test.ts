import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Knex } from 'knex';
import { createTestDatabase } from '@platform/testing';
import { openDatabase, type Database, type Migration } from './index';

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
}

describe('openDatabase on a real Postgres server', () => {
  let drop: () => Promise<void>;
  afterAll(() => drop?.());
  databaseBehaviour(async () => {
    const t = await createTestDatabase();
    drop = t.drop;
    return openDatabase({ url: t.url, dataDir: '', schema: 'svc' });
  });
});

describe('openDatabase on the embedded engine (PGlite under DATA_DIR)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'db-test-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  databaseBehaviour(() => openDatabase({ dataDir, schema: 'svc' }));

  it('keeps the data after the process closes and reopens it', async () => {
    const again = await openDatabase({ dataDir, schema: 'svc' });
    try {
      expect(await again.table('notes').pluck('body')).toEqual(['first']);
      expect(await again.migrate(notes)).toEqual([]);
    } finally {
      await again.close();
    }
  });
});
