import { openDatabase, type Database } from '@platform/db';
import { createTestDatabase } from '@platform/testing';
import { init } from '../../../migrations/20261122000000_init';
import { tuples } from '../../../migrations/20261122010000_tuples';
import { EmbeddedEngine } from '../embedded-engine';
import { TypeSystem } from '../model';

/** A test database in which each engine gets its own freshly migrated schema, so tests never share tuples. */
export async function openEngineDatabase() {
  const database = await createTestDatabase();
  const open = new Set<Database>();
  let next = 0;
  return {
    url: database.url,
    /** A new empty engine over the given model (DSL), in a schema of its own. */
    async engine(modelDsl?: string): Promise<{ engine: EmbeddedEngine; db: Database; dispose(): Promise<void> }> {
      const db = await openDatabase({ url: database.url, dataDir: '', schema: `authz_${next++}` });
      open.add(db);
      await db.migrate([init, tuples]);
      const model = modelDsl ? TypeSystem.fromDsl(modelDsl) : TypeSystem.fromFile();
      return {
        engine: new EmbeddedEngine(db, model),
        db,
        async dispose() {
          open.delete(db);
          await db.close();
        },
      };
    },
    async close() {
      for (const db of open) await db.close();
      await database.drop();
    },
  };
}
