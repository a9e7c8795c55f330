import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Custom roles: a role of an organization bundles assignable permissions and is assigned
 * to teams. The rows are the record; the tuples in `tuples` make them effective (apps/authz/src/roles).
 */
export const roles: Migration = {
  name: '20261122020000_roles',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('roles', (t) => {
      t.comment('custom roles of organizations: a named set of assignable organization permissions');
      t.bigIncrements('id').primary().comment('role id; the role is the object role:<id> of the authorization model');
      t.bigInteger('org_id').notNullable().comment('organization (account id) the role belongs to; the owner_id of RoleResponse');
      t.text('name').notNullable().comment('role name, unique within the organization regardless of case');
      t.text('description').notNullable().defaultTo('').comment('free-text description');
      t.jsonb('permissions')
        .notNullable()
        .defaultTo('[]')
        .comment('the role permissions as [{namespace, action}], catalog entries, without duplicates, in the order given');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('when the role was created');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('when the role was last changed');
      t.index(['org_id', 'id'], 'roles_by_org');
    });
    await knex.raw('create unique index roles_org_lower_name on ??.roles (org_id, lower(name))', [schema]);

    await knex.schema.withSchema(schema).createTable('role_teams', (t) => {
      t.comment('teams a custom role is assigned to; each row goes with the tuple team:<team>#member assignee role:<role>');
      t.bigInteger('role_id').notNullable().references('id').inTable(`${schema}.roles`).onDelete('CASCADE').comment('the role');
      t.bigInteger('team_id').notNullable().comment('the team (orgs-teams team id) assigned the role');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('when the team was assigned');
      t.primary(['role_id', 'team_id'], { constraintName: 'role_teams_pkey' });
      t.index(['team_id', 'role_id'], 'role_teams_by_team');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('role_teams');
    await knex.schema.withSchema(schema).dropTable('roles');
  },
};
