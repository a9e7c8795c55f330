import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from './database';
import { pageOfQuery } from './paging';

describe('a page of a list', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paging-'));
  let db: Database;
  let statements = 0;

  beforeAll(async () => {
    db = await openDatabase({ dataDir, schema: 'paging' });
    await db.knex.raw('create table paging.items (id int primary key, name text not null, kept boolean not null)');
    await db.table('items').insert(Array.from({ length: 7 }, (_, i) => ({ id: i + 1, name: `item-${i + 1}`, kept: i % 2 === 0 })));
    db.knex.on('query', () => statements++);
  });
  afterAll(async () => {
    await db?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const kept = () => db.table('items').where({ kept: true });
  const byName = (q: ReturnType<typeof kept>) => q.orderBy('name').select('id', 'name');

  it('answers its rows and the count of every row on the same conditions, in one statement', async () => {
    statements = 0;
    const page = await pageOfQuery(kept(), { limit: 2, offset: 2 }, byName);
    expect(page).toEqual({
      rows: [
        { id: 5, name: 'item-5' },
        { id: 7, name: 'item-7' },
      ],
      total: 4,
    });
    expect(statements).toBe(1);
  });

  it('still counts every row for a page past the end', async () => {
    expect(await pageOfQuery(kept(), { limit: 2, offset: 10 }, byName)).toEqual({ rows: [], total: 4 });
  });

  it('answers an empty first page in one statement: no row at all', async () => {
    statements = 0;
    expect(await pageOfQuery(db.table('items').where({ name: 'none' }), { limit: 2, offset: 0 }, byName)).toEqual({ rows: [], total: 0 });
    expect(statements).toBe(1);
  });

  it('answers the whole list, counted, when no page is asked for', async () => {
    const all = await pageOfQuery(kept(), undefined, byName);
    expect(all.total).toBe(4);
    expect(all.rows.map((r) => (r as { id: number }).id)).toEqual([1, 3, 5, 7]);
  });
});
