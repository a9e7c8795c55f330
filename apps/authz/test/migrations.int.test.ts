import type { Knex } from 'knex';
import { describeMigrationRoundTrips } from '@platform/service-testing';
import { migrations } from '../migrations';

const tuple = (object: string, relation: string, user: string, userRelation = '') => {
  const [object_type, object_id] = object.split(':');
  const [user_type, user_id] = user.split(':');
  return { object_type, object_id, relation, user_type, user_id, user_relation: userRelation };
};

// Written before the roles migration: an organization member, a team member and a team holding a role.
const seededTuples = [
  tuple('organization:7', 'member', 'user:2'),
  tuple('team:5', 'member', 'user:2'),
  tuple('role:1', 'assignee', 'team:5', 'member'),
];

const tuplesOf = (knex: Knex, schema: string) =>
  knex
    .withSchema(schema)
    .table('tuples')
    .select('object_type', 'object_id', 'relation', 'user_type', 'user_id', 'user_relation')
    .orderBy(['object_type', 'object_id', 'relation', 'user_type', 'user_id']);

describeMigrationRoundTrips('authz', migrations, {
  '20261122010000_tuples': {
    async after(knex, schema) {
      await knex
        .withSchema(schema)
        .table('tuples')
        .insert({ object_type: 'site', object_id: '1', relation: 'admin', user_type: 'user', user_id: '1' });
      const [row] = await knex.withSchema(schema).table('tuples').select('user_relation', 'created_at');
      expect(row).toEqual({ user_relation: '', created_at: expect.any(Date) });
    },
  },
  '20261122020000_roles': {
    async before(knex, schema) {
      await knex.withSchema(schema).table('tuples').insert(seededTuples);
    },
    async after(knex, schema) {
      expect(await tuplesOf(knex, schema)).toEqual(expect.arrayContaining(seededTuples.map((t) => expect.objectContaining(t))));
      const [role] = await knex
        .withSchema(schema)
        .table('roles')
        .insert({ org_id: 7, name: 'Deployers' })
        .returning(['id', 'description', 'permissions']);
      expect(role).toEqual({ id: expect.any(Number), description: '', permissions: [] });
      await knex.withSchema(schema).table('role_teams').insert({ role_id: role.id, team_id: 5 });
      // Role names are unique per organization regardless of case.
      await expect(knex.withSchema(schema).table('roles').insert({ org_id: 7, name: 'deployers' })).rejects.toThrow(/roles_org_lower_name/);
    },
  },
  '20261124080000_tuple_changes': {
    async before(knex, schema) {
      await knex
        .withSchema(schema)
        .table('tuples')
        .insert(tuple('organization:9', 'owner', 'user:3'));
    },
    async after(knex, schema) {
      // Tuples written before the log exist are kept and not logged: a replica loads them from the table.
      expect(await tuplesOf(knex, schema)).toEqual(
        expect.arrayContaining([expect.objectContaining(tuple('organization:9', 'owner', 'user:3'))]),
      );
      const log = () => knex.withSchema(schema).table('tuple_changes').select('seq', 'op', 'object_id', 'user_id').orderBy(['seq', 'op']);
      const head = () => knex.withSchema(schema).table('tuple_changes_head').first('seq', 'pruned');
      expect(await log()).toEqual([]);
      expect(await head()).toEqual({ seq: 0, pruned: 0 });
      // Each statement that changes tuples takes the next number; one that changes none takes nothing.
      const table = () => knex.withSchema(schema).table('tuples');
      await table().insert([tuple('team:8', 'member', 'user:4'), tuple('team:8', 'member', 'user:5')]);
      await table().where({ object_type: 'team', object_id: 'nothing' }).del();
      await table().where({ object_type: 'team', user_id: '5' }).update({ user_id: '6' });
      await table().where({ object_type: 'team', user_id: '4' }).del();
      expect(await log()).toEqual([
        { seq: 1, op: 'write', object_id: '8', user_id: '4' },
        { seq: 1, op: 'write', object_id: '8', user_id: '5' },
        { seq: 2, op: 'delete', object_id: '8', user_id: '5' },
        { seq: 2, op: 'write', object_id: '8', user_id: '6' },
        { seq: 3, op: 'delete', object_id: '8', user_id: '4' },
      ]);
      await knex.raw('truncate ??.tuples', [schema]);
      expect((await log()).at(-1)).toEqual({ seq: 4, op: 'truncate', object_id: '', user_id: '' });
      expect(await head()).toEqual({ seq: 4, pruned: 0 });
    },
  },
});
