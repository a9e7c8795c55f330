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
});
