import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * The embedded authorization engine's relationship tuples (OpenFGA's tuple store). The primary key leads with
 * object#relation, so a check's "who holds this relation on this object" is an index range; the second index
 * leads with the user, so "which objects of a type does this user relate to" (list objects) is one too.
 */
export const tuples: Migration = {
  name: '20261122010000_tuples',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('tuples', (t) => {
      t.comment('relationship tuples of the embedded authorization engine: user relation object, as in OpenFGA');
      t.text('object_type').notNullable().comment('type of the object, e.g. organization');
      t.text('object_id').notNullable().comment('id of the object within its type');
      t.text('relation').notNullable().comment('relation the user holds on the object, e.g. member');
      t.text('user_type').notNullable().comment('type of the user, e.g. user, or of the userset, e.g. team');
      t.text('user_id').notNullable().comment('id of the user or userset object; * for a type-wide wildcard');
      t.text('user_relation')
        .notNullable()
        .defaultTo('')
        .comment('relation of a userset user (team:5#member gives member); empty string for a plain user');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).comment('when the tuple was written');
      // user_relation before user_id: a check reads "all usersets of type T#r on object#relation" as a key prefix.
      t.primary(['object_type', 'object_id', 'relation', 'user_type', 'user_relation', 'user_id'], { constraintName: 'tuples_pkey' });
      t.index(['user_type', 'user_id', 'user_relation', 'object_type', 'relation', 'object_id'], 'tuples_by_user');
    });
  },
  async down(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).dropTable('tuples');
  },
};
