import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

const TUPLE_COLUMNS = ['object_type', 'object_id', 'relation', 'user_type', 'user_id', 'user_relation'];

/**
 * A log of every change to `tuples`, numbered in commit order, so each authz replica can keep an in-memory copy
 * of the tuples current by reading what was logged after the number it has applied (apps/authz/src/engine/memory-tuples.ts).
 *
 * Triggers write the log, so every writer counts: the engine, a unit of work's transaction, the admin CLI, a
 * hand-made fix. Before its first change a statement locks the one row of `tuple_changes_head`, and the lock is
 * held to commit: writers of tuples take turns from their first tuple statement on, so a number is only taken
 * once every smaller one is committed (or rolled back, and then reused). A reader that sees number n therefore
 * sees every change up to n: no gaps to wait for.
 */
export const tupleChanges: Migration = {
  name: '20261124080000_tuple_changes',
  async up(knex: Knex, schema: string) {
    await knex.schema.withSchema(schema).createTable('tuple_changes', (t) => {
      t.comment('changes to tuples in commit order, read by each authz replica to keep its in-memory tuples current');
      t.bigInteger('seq').notNullable().comment('number of the statement that made the change; a later commit has a larger number');
      t.text('op').notNullable().comment('write (the tuple was inserted), delete, or truncate (every tuple was removed)');
      for (const c of TUPLE_COLUMNS) t.text(c).notNullable().comment(`the tuple's ${c}; empty for truncate`);
      t.timestamp('created_at', { useTz: true })
        .notNullable()
        .defaultTo(knex.fn.now())
        .comment('when the change was made; old changes are pruned');
      t.index(['seq'], 'tuple_changes_by_seq');
    });
    await knex.raw(`alter table ??.tuple_changes add constraint tuple_changes_op check (op in ('write', 'delete', 'truncate'))`, [schema]);
    await knex.schema.withSchema(schema).createTable('tuple_changes_head', (t) => {
      t.comment('the one row that numbers tuple changes; tuple writers lock it until they commit');
      t.boolean('id').notNullable().defaultTo(true).primary().comment('always true: the table has one row');
      t.bigInteger('seq').notNullable().comment('number of the last change made (0: none yet)');
      t.bigInteger('pruned').notNullable().comment('changes up to this number may have been pruned; a replica behind it reloads');
    });
    await knex.raw('alter table ??.tuple_changes_head add constraint tuple_changes_head_one_row check (id)', [schema]);
    await knex.withSchema(schema).table('tuple_changes_head').insert({ id: true, seq: 0, pruned: 0 });

    // The schema name is admitted by openDatabase as [a-z][a-z0-9_]*, so quoting it is enough inside the bodies.
    const s = `"${schema}"`;
    const cols = TUPLE_COLUMNS.join(', ');
    await knex.raw(`create function ${s}.tuple_changes_lock() returns trigger language plpgsql as $$
begin
  -- Before the statement touches a tuple: a writer never holds a tuple row another writer waits for while it
  -- waits for this lock itself.
  perform 1 from ${s}.tuple_changes_head for update;
  return null;
end $$`);
    await knex.raw(`create function ${s}.tuple_changes_record() returns trigger language plpgsql as $$
declare
  next_seq bigint;
begin
  if tg_op = 'TRUNCATE' then
    update ${s}.tuple_changes_head set seq = seq + 1 returning seq into next_seq;
    insert into ${s}.tuple_changes (seq, op, ${cols}) values (next_seq, 'truncate', '', '', '', '', '', '');
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
end $$`);
    await knex.raw(
      `create trigger tuples_lock before insert or update or delete or truncate on ${s}.tuples for each statement execute function ${s}.tuple_changes_lock()`,
    );
    await knex.raw(
      `create trigger tuples_inserted after insert on ${s}.tuples referencing new table as added for each statement execute function ${s}.tuple_changes_record()`,
    );
    await knex.raw(
      `create trigger tuples_deleted after delete on ${s}.tuples referencing old table as removed for each statement execute function ${s}.tuple_changes_record()`,
    );
    await knex.raw(
      `create trigger tuples_updated after update on ${s}.tuples referencing old table as removed new table as added for each statement execute function ${s}.tuple_changes_record()`,
    );
    await knex.raw(
      `create trigger tuples_truncated after truncate on ${s}.tuples for each statement execute function ${s}.tuple_changes_record()`,
    );
  },
  async down(knex: Knex, schema: string) {
    const s = `"${schema}"`;
    for (const trigger of ['tuples_truncated', 'tuples_updated', 'tuples_deleted', 'tuples_inserted', 'tuples_lock']) {
      await knex.raw(`drop trigger ${trigger} on ${s}.tuples`);
    }
    await knex.raw(`drop function ${s}.tuple_changes_record()`);
    await knex.raw(`drop function ${s}.tuple_changes_lock()`);
    await knex.schema.withSchema(schema).dropTable('tuple_changes_head');
    await knex.schema.withSchema(schema).dropTable('tuple_changes');
  },
};
