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
});
