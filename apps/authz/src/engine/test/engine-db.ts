import { openDatabase, type Database } from '@platform/db';
import { createTestDatabase } from '@platform/testing';
import { init } from '../../../migrations/20261122000000_init';
import { tuples } from '../../../migrations/20261122010000_tuples';
import { tupleChanges } from '../../../migrations/20261124080000_tuple_changes';
import { tupleConditions } from '../../../migrations/20261125000000_tuple_conditions';
import { EmbeddedEngine, type EmbeddedEngineOptions } from '../embedded-engine';
import { TypeSystem } from '../model';

/** The migrations the engine needs: the tuples and their change log. */
export const ENGINE_MIGRATIONS = [init, tuples, tupleChanges, tupleConditions];

/**
 * Empties an engine schema as a fresh one: no tuples, an empty change log at sequence 0. Truncating the tuples makes
 * its trigger log the truncation, so the log is emptied after them.
 */
async function emptied(db: Database, schema: string): Promise<void> {
  await db.knex.transaction(async (trx) => {
    await trx.raw('truncate table ??.tuples', [schema]);
    await trx.raw('truncate table ??.tuple_changes', [schema]);
    await trx.raw('update ??.tuple_changes_head set seq = 0, pruned = 0', [schema]);
  });
}

/**
 * A test database in which each engine gets a schema of its own, so tests never share tuples. Migrating a schema costs
 * far more than emptying one (OpenFGA's suites make ~1,500 engines), so the schema of a disposed engine is emptied and
 * handed to a later one.
 */
export async function openEngineDatabase() {
  const database = await createTestDatabase();
  const open = new Set<Database>();
  /** Migrated schemas whose engines were disposed; emptied when taken again. */
  const free: string[] = [];
  let next = 0;
  return {
    url: database.url,
    /** A new empty engine over the given model (DSL), in a schema of its own. */
    async engine(
      modelDsl?: string,
      options?: EmbeddedEngineOptions,
    ): Promise<{ engine: EmbeddedEngine; db: Database; schema: string; dispose(): Promise<void> }> {
      const reused = free.pop();
      const schema = reused ?? `authz_${next++}`;
      const db = await openDatabase({ url: database.url, dataDir: '', schema });
      open.add(db);
      if (reused) await emptied(db, schema);
      else await db.migrate(ENGINE_MIGRATIONS);
      const model = modelDsl ? TypeSystem.fromDsl(modelDsl) : TypeSystem.fromFile();
      const engine = new EmbeddedEngine(db, model, options);
      return {
        engine,
        db,
        schema,
        async dispose() {
          engine.close();
          open.delete(db);
          await db.close();
          free.push(schema);
        },
      };
    },
    /** Another replica: an engine of its own over the schema of an engine made above. */
    async replica(schema: string, modelDsl?: string, options?: EmbeddedEngineOptions): Promise<{ engine: EmbeddedEngine; db: Database }> {
      const db = await openDatabase({ url: database.url, dataDir: '', schema });
      open.add(db);
      const model = modelDsl ? TypeSystem.fromDsl(modelDsl) : TypeSystem.fromFile();
      return { engine: new EmbeddedEngine(db, model, options), db };
    },
    async close() {
      for (const db of open) await db.close();
      await database.drop();
    },
  };
}
