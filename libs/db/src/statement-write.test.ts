import { statementWrite, statementWrites } from './statement-write';

// What a statement writes, for the work that announces a change to readers keeping answers of its tables.

describe('statementWrites', () => {
  it('names every table a data-modifying CTE writes, the upsert of one included', () => {
    const sql =
      'with org as (insert into "identity"."accounts" (login) select $1 returning id),' +
      ' team as (insert into "identity"."teams" (org_id) select id from org returning id),' +
      ' member as (insert into "identity"."team_users" (team_id) select id from team on conflict (team_id, uid) do nothing returning uid),' +
      ' again as (insert into "identity"."org_users" (org_id) select id from org on conflict (org_id, uid) do update set is_public = false returning uid)' +
      ' select * from org';
    expect(statementWrites(sql)).toEqual([
      { schema: 'identity', table: 'accounts' },
      { schema: 'identity', table: 'teams' },
      { schema: 'identity', table: 'team_users' },
      { schema: 'identity', table: 'org_users' },
    ]);
  });

  it('tells a CTE with a write it cannot name as a write of an unknown table', () => {
    expect(statementWrites('with gone as (delete from accounts where id = $1 returning id) select * from gone')).toEqual([{}]);
  });

  it('answers as statementWrite for any other statement: one write, or none for a read', () => {
    const update = 'update "identity"."accounts" set "description" = $1 where "id" = $2';
    expect(statementWrites(update)).toEqual([statementWrite(update)]);
    expect(statementWrites('select * from "identity"."accounts"')).toEqual([]);
    expect(statementWrites('with a as (select 1) select * from a')).toEqual([]);
    expect(statementWrites('(select "id" from "identity"."accounts") union all (select "id" from "identity"."teams")')).toEqual([]);
  });
});
