import { openDatabase, type Database } from '@platform/db';
import { createTestDatabase } from '@platform/testing';
import { schemaSnapshot } from './migration-round-trips';

describe('schemaSnapshot (real Postgres)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  const snapshot = () => schemaSnapshot(db.knex, 'snap');

  beforeAll(async () => {
    const t = await createTestDatabase();
    drop = t.drop;
    db = await openDatabase({ url: t.url, dataDir: '', schema: 'snap' });
    // Creates knex's bookkeeping tables, which are not part of the snapshot.
    await db.migrate([]);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('describes every table, column, index and constraint of the schema, one line each, without knex bookkeeping', async () => {
    expect(await snapshot()).toEqual(['schema snap']);
    await db.knex.raw(`comment on schema snap is 'for the test'`);
    await db.knex.schema.withSchema('snap').createTable('things', (t) => {
      t.comment('things');
      t.bigIncrements('id').comment('thing id');
      t.integer('size').notNullable().defaultTo(0).comment('how big');
      t.index(['size'], 'things_by_size');
    });
    await db.knex.raw('alter table snap.things add constraint things_size check (size >= 0)');
    expect(await snapshot()).toEqual([
      'schema snap -- for the test',
      'relation things (r) -- things',
      'relation things_id_seq (S)',
      `column things.id bigint not null default nextval('snap.things_id_seq'::regclass) -- thing id`,
      'column things.size integer not null default 0 -- how big',
      'index things.things_by_size: CREATE INDEX things_by_size ON snap.things USING btree (size)',
      'index things.things_pkey: CREATE UNIQUE INDEX things_pkey ON snap.things USING btree (id)',
      'constraint things.things_pkey: PRIMARY KEY (id)',
      'constraint things.things_size: CHECK ((size >= 0))',
    ]);
  });

  it.each([
    ['a column', 'alter table snap.things add column extra text', 'alter table snap.things drop column extra'],
    [
      'a changed default',
      'alter table snap.things alter column size set default 1',
      'alter table snap.things alter column size set default 0',
    ],
    ['an index', 'create index things_extra on snap.things (id, size)', 'drop index snap.things_extra'],
    [
      'a trigger',
      'create trigger things_noop before update on snap.things for each row execute function snap.noop()',
      'drop trigger things_noop on snap.things',
    ],
    ['a function', 'create function snap.answer() returns int language sql as $$ select 42 $$', 'drop function snap.answer()'],
    ['an enum type', `create type snap.mood as enum ('ok')`, 'drop type snap.mood'],
  ])('notices %s that a down would leave behind', async (_what, up, down) => {
    await db.knex.raw(`create or replace function snap.noop() returns trigger language plpgsql as $$ begin return new; end $$`);
    const before = await snapshot();
    await db.knex.raw(up);
    expect(await snapshot()).not.toEqual(before);
    await db.knex.raw(down);
    expect(await snapshot()).toEqual(before);
  });

  it('ignores where a column dropped and added again ends up', async () => {
    const before = await snapshot();
    await db.knex.raw('alter table snap.things drop column size');
    await db.knex.raw(`alter table snap.things add column size integer not null default 0`);
    await db.knex.raw(`comment on column snap.things.size is 'how big'`);
    await db.knex.raw('create index things_by_size on snap.things (size)');
    await db.knex.raw('alter table snap.things add constraint things_size check (size >= 0)');
    expect(await snapshot()).toEqual(before);
  });
});
