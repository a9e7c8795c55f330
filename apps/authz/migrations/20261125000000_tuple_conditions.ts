import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

const KEY_COLUMNS = ['object_type', 'object_id', 'relation', 'user_type', 'user_id', 'user_relation'];

/** The change log's record function, copying the given tuple columns (the change log migration's body, in one place). */
function recordFunction(schema: string, columns: string[]): string {
  const s = `"${schema}"`;
  const cols = columns.join(', ');
  return `create or replace function ${s}.tuple_changes_record() returns trigger language plpgsql as $$
declare
  next_seq bigint;
begin
  if tg_op = 'TRUNCATE' then
    update ${s}.tuple_changes_head set seq = seq + 1 returning seq into next_seq;
    insert into ${s}.tuple_changes (seq, op, ${KEY_COLUMNS.join(', ')}) values (next_seq, 'truncate', '', '', '', '', '', '');
    return null;
  end if;
  -- A statement that changed nothing takes no number.
  if tg_op = 'INSERT' then
    perform 1 from added limit 1;
  else
    perform 1 from removed limit 1;
  end if;
  if not found then
    return null;
  end if;
  update ${s}.tuple_changes_head set seq = seq + 1 returning seq into next_seq;
  if tg_op <> 'INSERT' then
    insert into ${s}.tuple_changes (seq, op, ${cols}) select next_seq, 'delete', ${cols} from removed;
  end if;
  if tg_op <> 'DELETE' then
    insert into ${s}.tuple_changes (seq, op, ${cols}) select next_seq, 'write', ${cols} from added;
  end if;
  return null;
end $$`;
}

/**
 * Conditioned tuples (OpenFGA's `[user with not_after]`): a tuple may name one of the model's conditions and the
 * parameter values it was written with. The condition is not part of the key, as in OpenFGA: one tuple per
 * user, relation and object, with or without a condition. The change log carries both columns, so each replica's
 * in-memory copy keeps them too.
 */
export const tupleConditions: Migration = {
  name: '20261125000000_tuple_conditions',
  async up(knex: Knex, schema: string) {
    for (const table of ['tuples', 'tuple_changes']) {
      await knex.schema.withSchema(schema).alterTable(table, (t) => {
        t.text('condition_name').notNullable().defaultTo('').comment("the model's condition the tuple counts under; empty for none");
        t.jsonb('condition_context').nullable().comment('parameter values written with the condition (JSON object); null for none');
      });
    }
    await knex.raw(recordFunction(schema, [...KEY_COLUMNS, 'condition_name', 'condition_context']));
  },
  async down(knex: Knex, schema: string) {
    await knex.raw(recordFunction(schema, KEY_COLUMNS));
    for (const table of ['tuple_changes', 'tuples']) {
      await knex.schema.withSchema(schema).alterTable(table, (t) => {
        t.dropColumn('condition_context');
        t.dropColumn('condition_name');
      });
    }
  },
};
