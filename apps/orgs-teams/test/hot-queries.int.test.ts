import type { Knex } from 'knex';
import { openDatabase, type Database } from '@platform/db';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';

// The statements every authenticated request makes are served by an index, never by reading a
// whole table: with sequential scans discouraged, each plan must use an index. Dropping one of the indexes
// the migrations create makes this test fail.

/** The statements of the hot path, as the stores write them (schema `identity`). */
const HOT: Record<string, { sql: string; bindings: unknown[] }> = {
  'authenticate a token (access_tokens by token_hash, then its account)': {
    sql: `select a.id, a.login, a.active, t.id as token_id, t.last_used_at from identity.access_tokens t
          join identity.accounts a on a.id = t.uid where t.token_hash = ?`,
    bindings: ['0'.repeat(64)],
  },
  'an organization by name': { sql: 'select * from identity.accounts where type = 1 and lower_login = ?', bindings: ['acme'] },
  'a user by login': { sql: 'select id from identity.accounts where type = 0 and lower_login = ?', bindings: ['alice'] },
  'the teams of an organization': { sql: 'select * from identity.teams where org_id = ?', bindings: [1] },
  'one membership of an organization': { sql: 'select uid from identity.org_users where org_id = ? and uid = ?', bindings: [1, 2] },
  'the members of a team': {
    sql: `select a.id, a.login from identity.team_users m join identity.accounts a on a.id = m.uid where m.team_id = ?`,
    bindings: [1],
  },
  "a user's teams in an organization": {
    sql: 'select team_id from identity.team_users where org_id = ? and uid = ?',
    bindings: [1, 2],
  },
  'the service account a Kubernetes ServiceAccount stands for': {
    sql: 'select account_id from identity.service_account_subjects where namespace = ? and name = ?',
    bindings: ['billing', 'exporter'],
  },
  'the service accounts of an organization': {
    sql: 'select id, login from identity.accounts where type = 2 and service_account_org_id = ? order by lower_login',
    bindings: [1],
  },
};

describe('the hot queries of orgs-teams use indexes', () => {
  let db: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await createTestDatabase();
    drop = t.drop;
    db = await openDatabase({ url: t.url, dataDir: '', schema: 'identity' });
    await db.migrate(migrations);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  /** The plan of a statement with sequential scans discouraged (the tables are small here). */
  async function plan(knex: Knex, sql: string, bindings: unknown[]): Promise<string> {
    return knex.transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      const rows = (await trx.raw(`explain ${sql}`, bindings as never)).rows as { 'QUERY PLAN': string }[];
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
  }

  it.each(Object.entries(HOT))('%s', async (_name, q) => {
    const text = await plan(db.knex, q.sql, q.bindings);
    expect(text).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
    expect(text).not.toMatch(/Seq Scan/);
  });
});
