import { insertTuples, literal, tuplesTableHere } from './tuples-table';

describe("authz's tuples table for a writer of its own change's tuples", () => {
  /** A knex whose raw statements answer one row each, in turn, and are noted. */
  const answering = (...rows: object[]) => {
    const asked: string[] = [];
    return { asked, knex: { raw: async (sql: string) => (asked.push(sql), { rows: [rows[asked.length - 1]] }) } };
  };

  it('is used only when authz migrated its table there and writes its tuples there', async () => {
    const missing = answering({ here: false });
    expect(await tuplesTableHere(missing.knex)).toBe(false);
    expect(missing.asked).toHaveLength(1);
    // Migrated, but empty: authz writes elsewhere (OpenFGA), or has not written the site admin's yet.
    expect(await tuplesTableHere(answering({ here: true }, { held: false }).knex)).toBe(false);
    expect(await tuplesTableHere(answering({ here: true }, { held: true }).knex)).toBe(true);
  });

  it('inserts the rows it is given, leaving one already there as it is, and takes literals of tuple words only', () => {
    const sql = insertTuples([
      {
        objectType: literal('team'),
        objectId: 'team.id::text',
        relation: literal('member'),
        userType: literal('user'),
        userId: '?::text',
        userRelation: literal(''),
        from: 'team',
      },
    ]);
    expect(sql).toBe(
      'insert into "authz"."tuples" (object_type, object_id, relation, user_type, user_id, user_relation) ' +
        "select 'team', team.id::text, 'member', 'user', ?::text, '' from team on conflict do nothing returning 1",
    );
    expect(() => literal("x'; drop table tuples; --")).toThrow('not a tuple word');
    expect(() => insertTuples([])).toThrow('no tuples');
  });
});
