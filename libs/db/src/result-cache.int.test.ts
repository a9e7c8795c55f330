import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openPGliteWorker, type PGliteLike, type PGliteWorker } from './pglite-worker';
import { isKeptRead } from './result-cache';

type Rows = { rows: Record<string, unknown>[] };

describe("the embedded database's result cache", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'result-cache-'));
  let worker: PGliteWorker;
  let a: PGliteLike;
  let b: PGliteLike;
  const q = async (s: PGliteLike, sql: string, params: unknown[] = []) => ((await s.query(sql, params)) as Rows).rows;
  const counter = async (s: PGliteLike) => Number((await q(s, 'select n from counters where id = $1', [1]))[0].n);

  beforeAll(async () => {
    worker = openPGliteWorker(dataDir, { resultCache: { entries: 100, maxAnswerSize: 10_000 } });
    await worker.waitReady;
    a = worker.session();
    b = worker.session();
    await q(a, 'create table counters (id int primary key, n int not null)');
    await q(a, 'insert into counters values (1, 0), (2, 0)');
  });
  afterAll(async () => {
    await worker.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a read it has seen twice from memory, and a copy the caller may change', async () => {
    let hits = 0;
    worker.resultCache.onHit = () => (hits += 1);
    await counter(a); // the first time: run, and noted
    await counter(a); // the second: run, and kept
    expect(hits).toBe(0);
    const third = await q(b, 'select n from counters where id = $1', [1]);
    expect(hits).toBe(1);
    third[0].n = 999;
    expect(await counter(a)).toBe(0);
    expect(hits).toBe(2);
  });

  it('gives each caller its own copy of dates, bytes and JSON', async () => {
    const sql = "select timestamptz '2026-01-01T00:00:00Z' as at, '\\x0102'::bytea as bytes, '{\"a\":[1,{\"b\":2}]}'::json as doc";
    const read = async () => (await q(a, sql))[0] as { at: Date; bytes: Uint8Array; doc: { a: [number, { b: number }] } };
    await read();
    await read();
    const mine = await read();
    mine.at.setFullYear(1999);
    mine.bytes[0] = 9;
    mine.doc.a[1].b = 99;
    const again = await read();
    expect([again.at.toISOString(), [...again.bytes], again.doc]).toEqual(['2026-01-01T00:00:00.000Z', [1, 2], { a: [1, { b: 2 }] }]);
  });

  it('answers a read after a write with what was written, from any session', async () => {
    for (let i = 1; i <= 5; i++) {
      await counter(a);
      await counter(b);
      await q(a, 'update counters set n = n + 1 where id = $1', [1]);
      expect([await counter(a), await counter(b)]).toEqual([i, i]);
    }
  });

  it('never gives a read an answer older than a write acknowledged before it, however reads and writes interleave', async () => {
    const readers = Array.from({ length: 6 }, () => worker.session());
    let acknowledged = 0;
    let stop = false;
    const stale: string[] = [];
    const read = async (s: PGliteLike) => {
      let last = 0;
      while (!stop) {
        const floor = acknowledged;
        const n = await counter(s);
        if (n < floor) stale.push(`read ${n} after ${floor} was acknowledged`);
        if (n < last) stale.push(`read ${n} after reading ${last}`);
        last = n;
        // An answer from the cache settles without a turn of the event loop: let the writer's answers in.
        await new Promise((r) => setImmediate(r));
      }
    };
    const start = await counter(a);
    const reading = readers.map(read);
    for (let i = 1; i <= 60; i++) {
      const [row] = await q(a, 'update counters set n = n + 1 where id = $1 returning n', [1]);
      acknowledged = Number(row.n);
      await new Promise((r) => setImmediate(r));
    }
    stop = true;
    await Promise.all(reading);
    expect(stale).toEqual([]);
    expect(await counter(b)).toBe(start + 60);
  });

  it('gives a transaction its own uncommitted writes, and the others what was committed once it ends', async () => {
    const before = await counter(b);
    await counter(b);
    await q(a, 'begin');
    await counter(a); // a read before the transaction changes anything
    await q(a, 'update counters set n = n + 100 where id = $1', [1]);
    expect(await counter(a)).toBe(before + 100);
    await q(a, 'rollback');
    expect([await counter(a), await counter(b)]).toEqual([before, before]);

    await q(a, 'begin');
    await q(a, 'update counters set n = n + 7 where id = $1', [1]);
    await q(a, 'commit');
    expect([await counter(a), await counter(b)]).toEqual([before + 7, before + 7]);
  });

  it('runs every time a read the clock or a sequence decides', async () => {
    const now = async () => String((await q(a, 'select clock_timestamp()::text as t'))[0].t);
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      seen.add(await now());
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(seen.size).toBe(4);
    expect(isKeptRead('select * from t where expires_at > now()')).toBe(false);
    expect(isKeptRead('select * from t for update')).toBe(false);
    expect(isKeptRead("select nextval('s')")).toBe(false);
    expect(isKeptRead('with x as (delete from t returning *) select * from x')).toBe(false);
    expect(isKeptRead('with x as (select 1) select * from x')).toBe(true);
    expect(isKeptRead('select "updated_at" from "s"."t" where "id" = $1')).toBe(true);
  });

  it('forgets everything when a setting that changes answers is made', async () => {
    const zone = async () => String((await q(a, "select to_char(timestamptz '2026-01-01 00:00:00+00', 'HH24') as h"))[0].h);
    await q(a, "set timezone = 'UTC'");
    await zone();
    expect(await zone()).toBe('00');
    await q(b, "set timezone = 'Asia/Tokyo'");
    expect(await zone()).toBe('09');
    await q(b, "set timezone = 'UTC'");
  });

  it("reads a cursor's rows afresh on every fetch, and keeps what it kept across a cursor's statements", async () => {
    await counter(a);
    await counter(a);
    const kept = worker.resultCache.size;
    expect(kept).toBeGreaterThan(0);
    await q(a, 'begin');
    await q(a, 'declare rows_of no scroll cursor for select g from generate_series(1, 5) g where g > $1', [0]);
    const fetched: unknown[] = [];
    for (;;) {
      const rows = await q(a, 'fetch 2 from rows_of');
      fetched.push(...rows.map((r) => r.g));
      if (rows.length < 2) break;
    }
    await q(a, 'close rows_of');
    await q(a, 'commit');
    expect(fetched).toEqual([1, 2, 3, 4, 5]);
    expect(worker.resultCache.size).toBe(kept);
  });

  it('keeps no answer larger than its limit', async () => {
    const big = 'select repeat($1, 20000) as s';
    await q(a, big, ['x']);
    const size = worker.resultCache.size;
    await q(a, big, ['x']);
    expect(worker.resultCache.size).toBe(size);
  });
});
