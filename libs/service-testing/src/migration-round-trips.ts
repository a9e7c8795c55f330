import type { Knex } from 'knex';
import { openDatabase, type Database, type Migration } from '@platform/db';
import { createTestDatabase } from '@platform/testing';

/** Rows for one migration's round trip: seeded just before it runs, checked just after. */
export interface MigrationSeed {
  /** Inserts rows that are valid just before the migration (the schema of the migrations before it). */
  before?(knex: Knex, schema: string): Promise<void>;
  /** Checks, once the migration ran, that the rows survived or were converted as intended. */
  after?(knex: Knex, schema: string): Promise<void>;
}

// knex's own bookkeeping (knex_migrations, knex_migrations_lock and their sequences) is not the service's schema.
const NOT_KNEX = `c.relname !~ '^knex_migrations'`;

/**
 * Everything a migration can create or change in a schema, one line per object, in a stable order:
 * the schema comment, relations, columns (type, nullability, default, comment), indexes, constraints,
 * triggers, functions and types. Column positions are left out: a column dropped and added again moves.
 */
export async function schemaSnapshot(knex: Knex, schema: string): Promise<string[]> {
  const rows = async (sql: string) => (await knex.raw(sql, [schema])).rows as Record<string, unknown>[];
  const [comment] = await rows(`select obj_description(oid, 'pg_namespace') as comment from pg_namespace where nspname = ?`);
  const relations = await rows(
    `select c.relname, c.relkind, obj_description(c.oid, 'pg_class') as comment
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ? and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f', 'c') and ${NOT_KNEX}
      order by c.relname`,
  );
  const columns = await rows(
    `select c.relname, a.attname, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull,
            pg_get_expr(d.adbin, d.adrelid) as "default", col_description(c.oid, a.attnum) as comment
       from pg_attribute a
       join pg_class c on c.oid = a.attrelid
       join pg_namespace n on n.oid = c.relnamespace
       left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where n.nspname = ? and c.relkind in ('r', 'p', 'v', 'm', 'f', 'c') and a.attnum > 0 and not a.attisdropped and ${NOT_KNEX}
      order by c.relname, a.attnum`,
  );
  const indexes = await rows(
    `select c.relname, i.relname as name, pg_get_indexdef(i.oid) as def
       from pg_index x
       join pg_class i on i.oid = x.indexrelid
       join pg_class c on c.oid = x.indrelid
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ? and ${NOT_KNEX}
      order by c.relname, i.relname`,
  );
  const constraints = await rows(
    `select c.relname, k.conname, pg_get_constraintdef(k.oid) as def
       from pg_constraint k
       join pg_class c on c.oid = k.conrelid
       join pg_namespace n on n.oid = k.connamespace
      where n.nspname = ? and ${NOT_KNEX}
      order by c.relname, k.conname`,
  );
  const triggers = await rows(
    `select c.relname, t.tgname, pg_get_triggerdef(t.oid) as def
       from pg_trigger t
       join pg_class c on c.oid = t.tgrelid
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ? and not t.tgisinternal
      order by c.relname, t.tgname`,
  );
  const functions = await rows(
    `select p.proname, pg_get_function_identity_arguments(p.oid) as args
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = ?
      order by 1, 2`,
  );
  // Row types of tables are covered by the tables; these are the types made with create type / domain.
  const types = await rows(
    `select t.typname, t.typtype
       from pg_type t join pg_namespace n on n.oid = t.typnamespace
      where n.nspname = ? and (t.typtype in ('d', 'e', 'r', 'm')
        or (t.typtype = 'c' and (select relkind from pg_class where oid = t.typrelid) = 'c'))
      order by 1`,
  );
  const note = (text: unknown) => (text == null ? '' : ` -- ${text}`);
  return [
    `schema ${schema}${note(comment?.comment)}`,
    ...relations.map((r) => `relation ${r.relname} (${r.relkind})${note(r.comment)}`),
    ...columns.map(
      (r) =>
        `column ${r.relname}.${r.attname} ${r.type}${r.attnotnull ? ' not null' : ''}` +
        `${r.default == null ? '' : ` default ${r.default}`}${note(r.comment)}`,
    ),
    ...indexes.map((r) => `index ${r.relname}.${r.name}: ${r.def}`),
    ...constraints.map((r) => `constraint ${r.relname}.${r.conname}: ${r.def}`),
    ...triggers.map((r) => `trigger ${r.relname}.${r.tgname}: ${r.def}`),
    ...functions.map((r) => `function ${r.proname}(${r.args})`),
    ...types.map((r) => `type ${r.typname} (${r.typtype})`),
  ];
}

/**
 * Round trips of a service's migrations on a fresh database, as backstage tests its migrations: for every
 * migration in order, migrate to just before it, seed rows (`seeds[name].before`), apply it, check the rows
 * (`seeds[name].after`), roll it back and expect exactly the schema from before it, then apply it again and
 * expect the same schema as the first time. At the end everything is rolled back to an empty schema.
 */
export function describeMigrationRoundTrips(schema: string, migrations: Migration[], seeds: Record<string, MigrationSeed> = {}): void {
  describe(`${schema} migrations: up, down and up again, one at a time`, () => {
    let db: Database;
    let drop: (() => Promise<void>) | undefined;
    let empty: string[];

    beforeAll(async () => {
      const test = await createTestDatabase();
      drop = test.drop;
      db = await openDatabase({ url: test.url, dataDir: '', schema });
      empty = await schemaSnapshot(db.knex, schema);
    });
    afterAll(async () => {
      await db?.close();
      await drop?.();
    });

    it('has seeds only for migrations in the list', () => {
      const names = migrations.map((m) => m.name);
      expect(Object.keys(seeds).filter((name) => !names.includes(name))).toEqual([]);
    });

    migrations.forEach((migration, i) => {
      const previous = i > 0 ? migrations[i - 1].name : undefined;
      const seed = seeds[migration.name];
      const seeded = seed ? ' with seeded rows' : '';
      it(`${migration.name}: up${seeded}, down to the schema before it, up again`, async () => {
        // Exactly the migrations before this one applied, whatever an earlier failing round trip left behind.
        if (previous) await db.migrate(migrations, { to: previous });
        await db.rollback(migrations, { to: previous });
        const before = await schemaSnapshot(db.knex, schema);

        await seed?.before?.(db.knex, schema);
        expect(await db.migrate(migrations, { to: migration.name })).toEqual([migration.name]);
        await seed?.after?.(db.knex, schema);
        const after = await schemaSnapshot(db.knex, schema);

        expect(await db.rollback(migrations, { to: previous })).toEqual([migration.name]);
        expect(await schemaSnapshot(db.knex, schema)).toEqual(before);

        expect(await db.migrate(migrations, { to: migration.name })).toEqual([migration.name]);
        expect(await schemaSnapshot(db.knex, schema)).toEqual(after);
      });
    });

    it('rolls every migration back, newest first, to an empty schema', async () => {
      await db.migrate(migrations);
      expect(await db.rollback(migrations)).toEqual(migrations.map((m) => m.name).reverse());
      const tables = await db
        .knex('information_schema.tables')
        .where({ table_schema: schema })
        .whereNotIn('table_name', ['knex_migrations', 'knex_migrations_lock'])
        .pluck('table_name');
      expect(tables).toEqual([]);
      expect(await schemaSnapshot(db.knex, schema)).toEqual(empty);
    });
  });
}
