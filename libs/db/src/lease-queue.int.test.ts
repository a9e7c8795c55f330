import type { Knex } from 'knex';
import { createTestDatabase } from '@platform/testing';
import { LeaseQueue, openDatabase, type Database } from './index';

// The lease queue against real Postgres: a table of jobs with a due time, an owner and an attempt count.
describe('LeaseQueue', () => {
  let db: Database;
  let drop: () => Promise<void>;
  const queue = () =>
    new LeaseQueue(db, { table: 'jobs', dueAt: 'due_at', owner: 'owner', leaseMs: 60_000, backoff: { baseMs: 1_000, maxMs: 8_000 } });
  const dueJobs = (trx: Knex.Transaction, limit = 10) =>
    db.table('jobs', trx).where('due_at', '<=', new Date()).orderBy('id').limit(limit).select('id', 'attempts');

  beforeAll(async () => {
    const t = await createTestDatabase();
    drop = t.drop;
    db = await openDatabase({ url: t.url, dataDir: '', schema: 'lease_queue_test' });
    await db.migrate([
      {
        name: '20260101000000_jobs',
        up: (knex, schema) =>
          knex.schema.withSchema(schema).createTable('jobs', (t) => {
            t.bigIncrements('id');
            t.timestamp('due_at', { useTz: true }).notNullable();
            t.string('owner', 36).nullable();
            t.integer('attempts').notNullable().defaultTo(0);
            t.text('last_error').notNullable().defaultTo('');
          }),
        down: (knex, schema) => knex.schema.withSchema(schema).dropTable('jobs'),
      },
    ]);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });
  beforeEach(async () => {
    await db.table('jobs').delete();
    await db.table('jobs').insert([1, 2, 3, 4].map(() => ({ due_at: new Date(0) })));
  });

  it('leases due rows to their taker, and a worker taking at the same time gets the others', async () => {
    const q = queue();
    let second: { id: number }[] = [];
    const first = await db.transaction(async (trx) => {
      const taken = await q.take<{ id: number }>(trx, dueJobs(trx, 2), 'a');
      // The first transaction still holds its rows: the second skips them rather than waiting.
      second = await db.transaction((other) => q.take<{ id: number }>(other, dueJobs(other), 'b'));
      return taken;
    });
    expect(first.map((r) => r.id)).toHaveLength(2);
    expect(second.map((r) => r.id).sort()).toEqual(
      (await db.table('jobs').pluck('id')).filter((id: number) => !first.some((r) => r.id === id)).sort(),
    );
    const rows = await db.table('jobs').select('id', 'owner', 'due_at');
    for (const r of rows) {
      expect(r.owner).toBe(first.some((f) => f.id === r.id) ? 'a' : 'b');
      expect(new Date(r.due_at).getTime()).toBeGreaterThan(Date.now() + 50_000);
    }
    expect(await db.transaction((trx) => q.take(trx, dueJobs(trx), 'c'))).toEqual([]);
  });

  it('lets only the holder write its row, and notes a failure with a backoff that grows with the attempts', async () => {
    const q = queue();
    const [job] = await db.transaction((trx) => q.take<{ id: number }>(trx, dueJobs(trx, 1), 'a'));
    await q.failed({ id: job.id, owner: 'b' }, 1, { last_error: 'not mine' });
    expect(await db.table('jobs').where({ id: job.id }).first('attempts', 'last_error')).toEqual({ attempts: 0, last_error: '' });

    const before = Date.now();
    await q.failed({ id: job.id, owner: 'a' }, 3, { last_error: 'refused' });
    const row = await db.table('jobs').where({ id: job.id }).first('attempts', 'last_error', 'due_at');
    expect(row).toMatchObject({ attempts: 3, last_error: 'refused' });
    const wait = new Date(row.due_at).getTime() - before;
    expect(wait).toBeGreaterThanOrEqual(4_000 - 5);
    expect(wait).toBeLessThan(5_000);

    expect(await q.held({ id: job.id, owner: 'b' }).delete()).toBe(0);
    expect(await q.held({ id: job.id }).delete()).toBe(0);
    expect(await q.held({ id: job.id, owner: 'a' }).delete()).toBe(1);
  });
});
