import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * A team may hold a custom role until a date: the assignment's tuple then carries the model's `not_after` condition
 * with that time, and authz passes the current time with every check, so the role stops granting by itself.
 */
export const roleTeamUntil: Migration = {
  name: '20261125010000_role_team_until',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('role_teams', (t) => {
      t.timestamp('until', { useTz: true })
        .nullable()
        .comment('when the assignment ends (the tuple is conditioned on it); null: it does not');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).alterTable('role_teams', (t) => t.dropColumn('until'));
  },
};
