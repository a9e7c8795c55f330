import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase } from '@platform/testing';
import { isUniqueViolation, openDatabase, type Database } from './index';

/** The error a duplicate row raises, on an engine. */
async function duplicateError(db: Database): Promise<unknown> {
  await db.knex.schema.withSchema(db.schema).createTable('uniq', (t) => t.integer('id').primary());
  await db.table('uniq').insert({ id: 1 });
  return db
    .transaction((trx) => db.table('uniq', trx).insert({ id: 1 }))
    .then(
      () => undefined,
      (err: unknown) => err,
    );
}

describe('isUniqueViolation', () => {
  it('is true only for an error with SQLSTATE 23505', () => {
    expect(isUniqueViolation(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(true);
    expect(isUniqueViolation({ code: '23505' })).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('not null'), { code: '23502' }))).toBe(false);
    expect(isUniqueViolation(new Error('23505'))).toBe(false);
    for (const other of [undefined, null, '23505', 23505, {}]) expect(isUniqueViolation(other)).toBe(false);
  });

  it('recognises the error of a real Postgres server (pg)', async () => {
    const t = await createTestDatabase();
    const db = await openDatabase({ url: t.url, dataDir: '', schema: 'svc' });
    try {
      expect(isUniqueViolation(await duplicateError(db))).toBe(true);
    } finally {
      await db.close();
      await t.drop();
    }
  });

  it('recognises the error of the embedded engine (PGlite)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'db-errors-'));
    const db = await openDatabase({ dataDir, schema: 'svc' });
    try {
      expect(isUniqueViolation(await duplicateError(db))).toBe(true);
    } finally {
      await db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
