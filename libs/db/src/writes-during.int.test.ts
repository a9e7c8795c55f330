import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from './database';
import { writesDuring } from './writes-during';

// Background work announces what it changed only when it changed something: reads, and rows locked for a queue, are not
// writes; an insert, an update and a delete are; another request's write at the same time is not the work's.
describe('writes during some work', () => {
  let db: Database;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'writes-during-'));
    db = await openDatabase({ dataDir: dir, schema: 'wd' });
    await db.knex.schema.withSchema('wd').createTable('rows', (t) => {
      t.increments('id');
      t.text('updated_by');
    });
  });
  afterAll(async () => {
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('tells reads and row locks from writes', async () => {
    expect((await writesDuring(db, () => db.table('rows').select('updated_by'))).wrote).toBe(false);
    expect((await writesDuring(db, () => db.transaction((trx) => db.table('rows', trx).forUpdate().skipLocked().select('id')))).wrote).toBe(false);
    expect((await writesDuring(db, () => db.table('rows').insert({ updated_by: 'pass' }))).wrote).toBe(true);
    expect((await writesDuring(db, () => db.table('rows').update({ updated_by: 'again' }))).wrote).toBe(true);
    expect((await writesDuring(db, () => db.table('rows').delete())).wrote).toBe(true);
    const { result } = await writesDuring(db, async () => 42);
    expect(result).toBe(42);
    // A write of other work at the same time is not this work's.
    const quiet = writesDuring(db, () => new Promise((resolve) => setTimeout(resolve, 50)));
    await db.table('rows').insert({ updated_by: 'a request' });
    expect((await quiet).wrote).toBe(false);
  });
});
