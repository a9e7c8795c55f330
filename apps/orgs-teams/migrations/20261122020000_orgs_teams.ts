import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/** Organizations (columns on accounts), their members, teams and team members. */
export const orgsTeams: Migration = {
  name: '20261122020000_orgs_teams',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.smallint('visibility')
        .notNullable()
        .defaultTo(0)
        .comment('Organizations: who may see it, 0 public, 1 limited (signed-in users), 2 private (members); the orgType of the API');
      t.string('manager_endpoint', 1024)
        .notNullable()
        .defaultTo('')
        .comment('Organizations: the multi-cluster-manager endpoint (managerManagementClusterEndPoint)');
    });

    await knex.schema.withSchema(schema).createTable('org_users', (t) => {
      t.comment('Organization members: a user is a member while in at least one team of the organization');
      t.bigInteger('org_id').notNullable().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE').comment('Organization');
      t.bigInteger('uid').notNullable().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE').comment('Member user');
      t.boolean('is_public').notNullable().defaultTo(false).comment('Membership shown to non-members (public member)');
      t.primary(['org_id', 'uid']);
      t.index(['uid']);
    });

    await knex.schema.withSchema(schema).createTable('teams', (t) => {
      t.comment('Teams of organizations; every organization has exactly one owner team (permission owner)');
      t.bigIncrements('id').comment('Team id');
      t.bigInteger('org_id').notNullable().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE').comment('Organization');
      t.string('name', 255).notNullable().comment('Team name as written');
      t.string('lower_name', 255).notNullable().comment('Lower-cased name: unique per organization');
      t.text('description').notNullable().defaultTo('').comment('Free-text description');
      t.string('permission', 16).notNullable().comment('none, read, write, admin, owner (the owner team only) or custom');
      t.string('type', 32).notNullable().comment('Team type: kubernetes or general');
      t.jsonb('units').nullable().comment('Unit names the team covers (string array), null when not set');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Creation time');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('Last change');
      t.unique(['org_id', 'lower_name']);
    });
    await knex.raw(`create unique index teams_one_owner_team on ??.teams (org_id) where permission = 'owner'`, [schema]);

    await knex.schema.withSchema(schema).createTable('team_users', (t) => {
      t.comment('Team members');
      t.bigInteger('team_id').notNullable().references('id').inTable(`${schema}.teams`).onDelete('CASCADE').comment('Team');
      t.bigInteger('org_id')
        .notNullable()
        .references('id')
        .inTable(`${schema}.accounts`)
        .onDelete('CASCADE')
        .comment('Organization of the team');
      t.bigInteger('uid').notNullable().references('id').inTable(`${schema}.accounts`).onDelete('CASCADE').comment('Member user');
      t.primary(['team_id', 'uid']);
      t.index(['org_id', 'uid']);
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('team_users');
    await knex.schema.withSchema(schema).dropTable('teams');
    await knex.schema.withSchema(schema).dropTable('org_users');
    await knex.schema.withSchema(schema).alterTable('accounts', (t) => {
      t.dropColumn('manager_endpoint');
      t.dropColumn('visibility');
    });
  },
};
