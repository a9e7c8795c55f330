import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Knex } from 'knex';
import { openDatabase } from './database';
import type { Migration } from './migration';
import { keptMigratedDatabase, migratedDatabaseCache, type SchemaMigrations } from './migrated-database';

// A new embedded database opened with a kept migrated one is a copy of it: every schema already migrated, nothing left
// to apply. The kept one is keyed by the migrations, made once however many ask at the same time, and used only when no
// one but this user may have written it.

const things: Migration = {
  name: '20270101000000_things',
  up: (knex: Knex, schema: string) => knex.schema.withSchema(schema).createTable('things', (t) => t.increments('id')),
  down: (knex: Knex, schema: string) => knex.schema.withSchema(schema).dropTable('things'),
};

describe('a new embedded database as a copy of a kept migrated one', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'migrated-database-'));
  // A schema of this run's own, so the kept database is one this run makes (the key is the schemas and migrations).
  const schemas: SchemaMigrations[] = [{ schema: `kept_${randomBytes(4).toString('hex')}`, migrations: [things] }];
  const [{ schema }] = schemas;
  const made: string[] = [];
  afterAll(() => {
    for (const dir of [root, ...made]) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Opens the data directory `name` (new or not) with `migratedDatabase`: whether it was made now, and its tables. */
  const open = async (name: string, migratedDatabase: string | undefined) => {
    const db = await openDatabase({ dataDir: path.join(root, name), schema, migratedDatabase });
    try {
      const tables: string[] = await db
        .knex('information_schema.tables')
        .where({ table_schema: schema })
        .orderBy('table_name')
        .pluck('table_name');
      return { created: db.created, tables, pending: await db.migrate(schemas[0].migrations) };
    } finally {
      await db.close();
    }
  };

  it('makes it once for many asking at once, only this user may write it, and a new database starts migrated', async () => {
    const [kept, again] = await Promise.all([keptMigratedDatabase(schemas), keptMigratedDatabase(schemas)]);
    made.push(kept!);
    expect(kept).toBe(migratedDatabaseCache(schemas));
    expect(again).toBe(kept);
    expect(fs.statSync(kept!).mode & 0o022).toBe(0);
    expect(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(`${path.basename(kept!)}.making-`))).toEqual([]);

    // Its tables and its migrations' bookkeeping are there before anything is applied: nothing is left to apply.
    expect(await open('new', kept)).toEqual({ created: true, tables: ['knex_migrations', 'knex_migrations_lock', 'things'], pending: [] });
    // Opened again, it is the database it was, not a new one.
    expect(await open('new', kept)).toMatchObject({ created: false, pending: [] });
  }, 120_000);

  it('is another one when a migration changes', () => {
    const changed = [
      { schema, migrations: [{ ...things, up: (knex: Knex, s: string) => knex.schema.withSchema(s).createTable('other', () => {}) }] },
    ];
    expect(migratedDatabaseCache(changed)).not.toBe(migratedDatabaseCache(schemas));
  });

  it('is not copied when others could have written it: the new database is made and migrated as before', async () => {
    const kept = (await keptMigratedDatabase(schemas))!;
    fs.chmodSync(kept, 0o777);
    try {
      // A fresh database: no table of the schema until its migration is applied.
      expect(await open('shared', kept)).toEqual({ created: true, tables: [], pending: [things.name] });
    } finally {
      fs.chmodSync(kept, 0o700);
    }
  }, 120_000);
});
