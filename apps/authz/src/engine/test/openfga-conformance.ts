import { metricsText } from '@platform/telemetry';
import type { EmbeddedEngine, EmbeddedEngineOptions } from '../embedded-engine';
import { openEngineDatabase } from './engine-db';
import { countAssertions, loadSuites, runSuiteTest, suiteDir, type StageEngines } from './openfga-suite';

// OpenFGA's consolidated and ABAC conformance suites through the embedded engine's public entry points (Write, Check,
// ListObjects, ListUsers; a model change is a new engine over the same tuples), in three modes, a test file each so
// that they run side by side: with every read from the table, from the tuples loaded in memory, and in table mode
// (more tuples than memory may hold: reads from the table through the bounded cache, which a bound of 0 tuples in
// memory makes every store with a tuple use). docs/authorization.md, "OpenFGA's conformance suites", says where the
// suite files come from; without them a file registers a single skipped test.

/**
 * The versions of the suite files these counts belong to (sha256: the consolidated and ABAC suites as OpenFGA's
 * repository holds them now, the copies CI reads), and how many assertions each holds: 1,216 in all. Every one of
 * them must hold; with other versions of the files every assertion must still hold, only the count is not pinned.
 */
const PINNED: Record<string, { sha256: string; assertions: number }> = {
  'consolidated_1_1_tests.yaml': { sha256: '91a47d5fd92709bd40352bf5b7115f099720ab0f1f25f5ed34fb688bf03d4ce9', assertions: 925 },
  'abac_tests.yaml': { sha256: 'cf0f2d882f884355a344f0c21c60e62aa397552bf5268eb64afe6ed4a9c2c6c4', assertions: 291 },
};

interface Mode {
  name: string;
  options: EmbeddedEngineOptions;
  load: boolean;
  cached?: boolean;
}

export const MODES = {
  table: { name: 'reading the table', options: { memory: false }, load: false },
  memory: { name: 'from memory', options: {}, load: true },
  // A small cache, so that entries are pushed out and large families not kept, as with many tenants.
  cached: { name: 'through the bounded cache', options: { memory: { maxTuples: 0, cacheTuples: 100 } }, load: true, cached: true },
} satisfies Record<string, Mode>;

/** Registers the suites' tests in one mode, in the test file that calls it. */
export function conformanceSuites(mode: Mode): void {
  const suites = loadSuites();
  if (suites.length === 0 && process.env.OPENFGA_TESTS_DIR) {
    // Pointed at the suites (CI is): their absence is a failure, not a skip.
    it('finds OpenFGA conformance suites where OPENFGA_TESTS_DIR points', () => {
      throw new Error(`no OpenFGA conformance suite in ${suiteDir()} (OPENFGA_TESTS_DIR)`);
    });
  } else if (suites.length === 0) {
    it.skip(`OpenFGA conformance suites (none found in ${suiteDir()}; set OPENFGA_TESTS_DIR)`, () => undefined);
  } else {
    let database: Awaited<ReturnType<typeof openEngineDatabase>>;
    beforeAll(async () => {
      database = await openEngineDatabase();
    });
    afterAll(async () => {
      await database?.close();
    });

    describe(`OpenFGA conformance, ${mode.name}`, () => {
      const counted = new Map<string, { assertions: number; passed: number; skipped: number }>();

      /** A fresh store per test; each later stage a new engine over it with the stage's model. */
      const stageEngines = (opened: { dispose: () => Promise<void> }[]): StageEngines => {
        let schema = '';
        let current: EmbeddedEngine | undefined;
        return {
          async first(modelDsl) {
            const made = await database.engine(modelDsl, mode.options);
            opened.push(made);
            schema = made.schema;
            return (current = made.engine);
          },
          async next(modelDsl) {
            current?.close();
            const { engine, db } = await database.replica(schema, modelDsl, mode.options);
            opened.push({ dispose: async () => (engine.close(), db.close()) });
            return (current = engine);
          },
        };
      };

      for (const suite of suites) {
        describe(suite.file, () => {
          counted.set(suite.file, { assertions: 0, passed: 0, skipped: 0 });
          for (const test of suite.tests) {
            it(`${test.name} (${countAssertions(test)} assertions)`, async () => {
              const opened: { dispose: () => Promise<void> }[] = [];
              try {
                const outcome = await runSuiteTest(test, stageEngines(opened), mode.load ? (e) => e.load() : undefined);
                const total = counted.get(suite.file)!;
                total.assertions += outcome.assertions;
                total.passed += outcome.passed;
                total.skipped += outcome.skipped;
                expect(outcome.failures).toEqual([]);
              } finally {
                for (const o of opened.reverse()) await o.dispose();
              }
            });
          }
        });
      }

      it('asked every assertion of the suites, and every one held', async () => {
        const lines = suites.map((s) => {
          const c = counted.get(s.file)!;
          return `${s.file}: ${c.passed} of ${c.assertions} passed, ${c.skipped} skipped`;
        });
        console.log(`OpenFGA conformance, ${mode.name}:\n${lines.join('\n')}`);
        for (const s of suites) {
          const c = counted.get(s.file)!;
          const all = s.tests.reduce((n, t) => n + countAssertions(t), 0);
          expect({ file: s.file, asked: c.assertions, passed: c.passed }).toEqual({ file: s.file, asked: all, passed: all });
          const pinned = PINNED[s.file];
          if (pinned?.sha256 === s.sha256) expect(all).toBe(pinned.assertions);
        }
        // The answers came through the cache: found there, and read from the table into it (the other modes use none).
        if (mode.cached) {
          const { body } = await metricsText();
          const count = (result: string) =>
            Number(body.match(new RegExp(`^cache_lookups_total\\{cache="authz.tuples",result="${result}"\\} (\\d+)`, 'm'))?.[1] ?? 0);
          expect({ hits: count('hit') > 0, misses: count('miss') > 0 }).toEqual({ hits: true, misses: true });
        }
      });
    });
  }
}
