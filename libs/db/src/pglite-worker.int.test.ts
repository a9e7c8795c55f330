import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openPGliteWorker, type PGliteLike, type PGliteWorker } from './pglite-worker';

// A statement whose parameters are plain values reaches the embedded engine as one protocol message, its parameters as
// text (pglite-worker.ts); any other goes through PGlite's query(). Both must answer the same: the same rows with the
// same JavaScript values, the same counts, the same errors, the same transactions.

type Answer = { rows: Record<string, unknown>[]; fields: { name: string; dataTypeID: number }[]; affectedRows: number };

describe('the embedded database: one message per plain statement', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pglite-worker-'));
  let worker: PGliteWorker;
  let s: PGliteLike;
  let other: PGliteLike;
  /** As knex sends it: plain parameters, no options (`{}`: the one-message path). */
  const plain = async (sql: string, params: unknown[] = []) => (await s.query(sql, params, {})) as Answer;
  /** The same through PGlite's query() (an option given, even its default, keeps a statement on that path). */
  const viaQuery = async (sql: string, params: unknown[] = []) => (await s.query(sql, params, { rowMode: 'object' })) as Answer;

  beforeAll(async () => {
    worker = openPGliteWorker(dataDir);
    await worker.waitReady;
    s = worker.session();
    other = worker.session();
    await plain(
      `create table things (id bigserial primary key, name text unique not null, n int, big bigint, ratio numeric, ok boolean,
        at timestamptz, doc jsonb, tags text[], note text)`,
    );
  });
  afterAll(async () => {
    await worker.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers an insert and a read with the values query() answers, type by type', async () => {
    const insert = `insert into things (name, n, big, ratio, ok, at, doc, tags, note)
      values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning *`;
    const values = (name: string) => [name, 42, '9007199254740993', '1.50', true, '2026-11-27T10:00:00.000Z', '{"a":[1,2]}', '{x,y}', null];
    const one = await plain(insert, values('one'));
    const two = await viaQuery(insert, values('two'));
    const strip = (a: Answer) => ({ ...a, rows: a.rows.map(({ id: _id, name: _name, ...rest }) => rest) });
    expect(strip(one)).toEqual(strip(two));
    expect(one.affectedRows).toBe(1);
    expect(one.rows[0]).toMatchObject({ n: 42, ok: true, doc: { a: [1, 2] }, tags: ['x', 'y'], note: null });
    expect(one.rows[0].at).toEqual(new Date('2026-11-27T10:00:00.000Z'));
    const read = 'select * from things where name = $1 and n = $2 and ok = $3';
    expect(await plain(read, ['one', 42, true])).toEqual(await viaQuery(read, ['one', 42, true]));
  });

  it('answers dates and arrays as query() answers them', async () => {
    const insert = 'insert into things (name, at, tags) values ($1, $2, $3) returning at, tags';
    const at = new Date('2026-11-30T01:02:03.456Z');
    // Quotes, backslashes, commas, braces, spaces, an empty text and a null: each element arrives as it was.
    const tags = ['a"b', 'c\\d', 'e,f', '{g}', ' h ', '', null, 'NULL'];
    const one = await plain(insert, ['dated-one', at, tags]);
    expect(one).toEqual(await viaQuery(insert, ['dated-two', at, tags]));
    expect(one.rows[0].at).toEqual(at);
    expect(one.rows[0].tags).toEqual(expect.arrayContaining(tags.slice(0, 6)));
    // Read back in SQL (PGlite's parse of a text[] answers a null element as the word): a null, then the word.
    const stored = 'select tags[7] is null as missing, tags[8] as word from things where name = $1';
    expect((await plain(stored, ['dated-one'])).rows).toEqual([{ missing: true, word: 'NULL' }]);
    const byIds = 'select name from things where id = any($1::bigint[]) and at = $2 order by name';
    const ids = (await plain('select id from things where name like $1', ['dated-%'])).rows.map((r) => Number(r.id));
    expect((await plain(byIds, [ids, at])).rows).toEqual([{ name: 'dated-one' }, { name: 'dated-two' }]);
    expect(await plain(byIds, [ids, at])).toEqual(await viaQuery(byIds, [ids, at]));
    const nested = 'select $1::int[] as flat, $2::int[][] as grid, $3::bool[] as flags, $4::text[] as none';
    const values = [
      [1, 2],
      [
        [1, 2],
        [3, 4],
      ],
      [true, false],
      [],
    ];
    expect(await plain(nested, values)).toEqual(await viaQuery(nested, values));
    expect((await plain(nested, values)).rows).toEqual([
      {
        flat: [1, 2],
        grid: [
          [1, 2],
          [3, 4],
        ],
        flags: [true, false],
        none: [],
      },
    ]);
  });

  it('counts the rows an update or a delete touched', async () => {
    expect((await plain('update things set n = n + $1 where ok = $2', [1, true])).affectedRows).toBe(2);
    expect((await plain('delete from things where name = $1', ['nothing'])).affectedRows).toBe(0);
  });

  it('fails as query() fails: a unique violation with its code and constraint', async () => {
    const insert = 'insert into things (name) values ($1)';
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err: Record<string, unknown>) => ({ code: err.code, constraint: err.constraint }),
      );
    const a = await failure(plain(insert, ['one']));
    expect(a).toEqual({ code: '23505', constraint: 'things_name_key' });
    expect(await failure(viaQuery(insert, ['one']))).toEqual(a);
    // The engine is usable after it: the message ended with its sync.
    expect((await plain('select count(*)::int as c from things where name = $1', ['one'])).rows).toEqual([{ c: 1 }]);
  });

  it('keeps a transaction its own: another session waits until it ends, and sees nothing rolled back', async () => {
    await plain('begin');
    await plain('insert into things (name) values ($1)', ['in-transaction']);
    const seen = other.query('select count(*)::int as c from things where name = $1', ['in-transaction']) as Promise<Answer>;
    await plain('rollback');
    expect((await seen).rows).toEqual([{ c: 0 }]);
  });

  describe('a statement run again is bound to its kept parse', () => {
    it('answers the same rows each time, and a failure of a kept statement leaves it usable', async () => {
      const insert = 'insert into things (name, n) values ($1, $2) returning name, n';
      for (let i = 0; i < 5; i++) expect((await plain(insert, [`kept-${i}`, i])).rows).toEqual([{ name: `kept-${i}`, n: i }]);
      await expect(plain(insert, ['kept-0', 9])).rejects.toMatchObject({ code: '23505' });
      expect((await plain(insert, ['kept-5', 5])).rows).toEqual([{ name: 'kept-5', n: 5 }]);
      const read = 'select count(*)::int as c from things where name like $1';
      expect((await plain(read, ['kept-%'])).rows).toEqual([{ c: 6 }]);
      expect((await plain(read, ['kept-%'])).rows).toEqual([{ c: 6 }]);
    });

    it('sees a changed table: a kept read of every column answers the column added since', async () => {
      await plain('create table shapes (id int primary key, a text)');
      const read = 'select * from shapes where id = $1';
      await plain('insert into shapes (id, a) values ($1, $2)', [1, 'x']);
      expect((await plain(read, [1])).rows).toEqual([{ id: 1, a: 'x' }]);
      expect((await plain(read, [1])).rows).toEqual([{ id: 1, a: 'x' }]);
      // Inside a transaction, as a migration runs: the kept parse must not be used after it.
      await plain('begin');
      await plain('alter table shapes add column b text default $$y$$');
      expect((await plain(read, [1])).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
      await plain('commit');
      expect((await plain(read, [1])).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
      await plain('alter table shapes drop column a');
      expect((await plain(read, [1])).rows).toEqual([{ id: 1, b: 'y' }]);
    });

    it('keeps running when more statements were run than it keeps, and after a rollback', async () => {
      const distinct = (i: number) => `select $1::int + ${i} as v`;
      for (let i = 0; i < 300; i++) expect((await plain(distinct(i), [1])).rows).toEqual([{ v: 1 + i }]);
      for (let i = 0; i < 300; i += 37) expect((await plain(distinct(i), [2])).rows).toEqual([{ v: 2 + i }]);
      await plain('begin');
      expect((await plain(distinct(1000), [3])).rows).toEqual([{ v: 1003 }]);
      await plain('rollback');
      expect((await plain(distinct(1000), [4])).rows).toEqual([{ v: 1004 }]);
    });
  });
});

describe('a new embedded database: a copy of the fresh one kept for this user', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pglite-fresh-'));
  const fresh = path.join(root, 'fresh');
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Opens an empty data directory named `name` with the fresh database at `fresh`, and answers whether it serves. */
  const opened = async (name: string): Promise<string> => {
    const dataDir = path.join(root, name);
    fs.mkdirSync(dataDir);
    const worker = openPGliteWorker(dataDir, { freshDatabase: fresh });
    try {
      await worker.waitReady;
      const s = worker.session();
      await s.query('create table t (id int)', [], {});
      await s.query('insert into t values (1)', [], {});
      const { rows } = (await s.query('select count(*)::int as n from t', [], {})) as { rows: { n: number }[] };
      return `${rows[0].n} row`;
    } finally {
      await worker.close();
    }
  };
  const holds = (name: string, file: string) => fs.existsSync(path.join(root, name, file));

  it('makes the fresh database the first time, only this user may write it, and copies it into every new one after', async () => {
    expect(await opened('first')).toBe('1 row');
    // initdb's own mode, 0750: no one but this user may write to it.
    expect(fs.statSync(fresh).mode & 0o022).toBe(0);
    expect(holds('first', 'PG_VERSION')).toBe(true);
    // What it holds is a fresh database: the first one's table is not in it.
    fs.writeFileSync(path.join(fresh, 'copied-from-fresh'), '');
    expect(await opened('second')).toBe('1 row');
    expect(holds('second', 'copied-from-fresh')).toBe(true);
    expect(fs.readdirSync(root).filter((n) => n.includes('.making-'))).toEqual([]);
  }, 60_000);

  it('makes a new one itself when the fresh one could have been written by others, or is no database', async () => {
    fs.chmodSync(fresh, 0o777);
    expect(await opened('shared')).toBe('1 row');
    expect(holds('shared', 'copied-from-fresh')).toBe(false);
    fs.chmodSync(fresh, 0o750);
    fs.rmSync(path.join(fresh, 'PG_VERSION'));
    expect(await opened('broken')).toBe('1 row');
    expect(holds('broken', 'copied-from-fresh')).toBe(false);
  }, 60_000);
});
