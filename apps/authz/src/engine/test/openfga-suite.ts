import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { DomainError } from '@platform/errors';
import { ConditionError, InvalidTupleError, ResolutionTooComplexError } from '../errors';
import type { EmbeddedEngine } from '../embedded-engine';
import type { RequestContext, Tuple } from '../types';

// OpenFGA's own conformance suites (its repository's assets/tests/*.yaml: `consolidated_1_1_tests.yaml` and
// `abac_tests.yaml`), run through the embedded engine's public entry points the way OpenFGA's test runner runs them
// against its server: per test a fresh store; per stage the stage's model becomes the model (the store's tuples stay,
// as after a WriteAuthorizationModel), the stage's tuples are written, then every assertion is asked.

/** A tuple as the suites write it. */
type SuiteTuple = Tuple;

interface CheckAssertion {
  tuple: SuiteTuple;
  expectation?: boolean;
  errorCode?: number;
  contextualTuples?: SuiteTuple[];
  context?: RequestContext;
}

interface ListObjectsAssertion {
  request: { user: string; type: string; relation: string };
  expectation?: string[] | null;
  errorCode?: number;
  contextualTuples?: SuiteTuple[];
  context?: RequestContext;
}

interface ListUsersAssertion {
  request: { filters: string[]; object: string; relation: string };
  expectation?: string[] | null;
  errorCode?: number;
  contextualTuples?: SuiteTuple[];
  context?: RequestContext;
  /** OpenFGA's runner skips these; so does this one (and counts them as skipped). */
  temporarilySkipReason?: string;
}

export interface SuiteStage {
  model: string;
  tuples?: SuiteTuple[] | null;
  checkAssertions?: CheckAssertion[] | null;
  listObjectsAssertions?: ListObjectsAssertion[] | null;
  listUsersAssertions?: ListUsersAssertion[] | null;
}

export interface SuiteTest {
  name: string;
  stages: SuiteStage[];
}

/** One suite file, read. */
export interface Suite {
  file: string;
  /** sha256 of the file, to tell the versions apart. */
  sha256: string;
  tests: SuiteTest[];
}

/** The suite files this project runs, by name. */
export const SUITE_FILES = ['consolidated_1_1_tests.yaml', 'abac_tests.yaml'];

/**
 * Where the suite files are: OPENFGA_TESTS_DIR, else `.cache/openfga-tests` at the top of the checkout (ignored by
 * git; docs/authorization.md says how to fill it).
 */
export function suiteDir(): string {
  if (process.env.OPENFGA_TESTS_DIR) return path.resolve(process.env.OPENFGA_TESTS_DIR);
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'nx.json'))) return path.join(dir, '.cache', 'openfga-tests');
    if (path.dirname(dir) === dir) return path.resolve('.cache', 'openfga-tests');
  }
}

/** Reads the suite files found in `dir` (missing ones are left out). */
export function loadSuites(dir: string = suiteDir()): Suite[] {
  return SUITE_FILES.filter((f) => fs.existsSync(path.join(dir, f))).map((f) => {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    return {
      file: f,
      sha256: crypto.createHash('sha256').update(text).digest('hex'),
      tests: (YAML.parse(text) as { tests: SuiteTest[] }).tests,
    };
  });
}

/** The assertions of a test: what runTest will count. */
export function countAssertions(test: SuiteTest): number {
  return test.stages.reduce(
    (n, s) => n + (s.checkAssertions?.length ?? 0) + (s.listObjectsAssertions?.length ?? 0) + (s.listUsersAssertions?.length ?? 0),
    0,
  );
}

/**
 * Whether an error is the one OpenFGA answers with `code`. The engine has no numeric codes; its errors map onto
 * OpenFGA's as the server would report them: 2002 a resolution deeper than the limit; 2021 a type, 2022 a relation
 * the model lacks; 2027 an invalid (contextual) tuple; 2000 any other invalid input (Check reports every input
 * problem so), conditions that cannot be evaluated included.
 */
export function isOpenFgaError(err: unknown, code: number): boolean {
  switch (code) {
    case 2002:
      return err instanceof ResolutionTooComplexError;
    case 2021:
      return err instanceof InvalidTupleError && /type '[^']*' is not in the model/.test(err.message);
    case 2022:
      return err instanceof InvalidTupleError && /relation '[^']*' is not defined/.test(err.message);
    case 2027:
      return err instanceof InvalidTupleError;
    case 2000:
      return err instanceof ConditionError || err instanceof InvalidTupleError || (err instanceof DomainError && err.kind === 'input');
    default:
      return false;
  }
}

/** What asking one test's assertions came to. */
export interface TestOutcome {
  assertions: number;
  passed: number;
  skipped: number;
  /** One line per assertion that did not hold. */
  failures: string[];
}

/** How a stage's engine is made: a fresh store for the first stage, the same store under a new model for the next. */
export interface StageEngines {
  first(modelDsl: string): Promise<EmbeddedEngine>;
  next(modelDsl: string): Promise<EmbeddedEngine>;
}

const sameSet = (got: string[], want: string[]) => {
  const a = [...got].sort();
  const b = [...want].sort();
  return a.length === b.length && a.every((v, i) => v === b[i]);
};

const describeError = (err: unknown) => (err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err));

/**
 * Runs one test: its stages in order, each through `engines`; `prepare` runs after a stage's tuples are written
 * (to load them into memory, say). Every assertion is asked, and each one that does not hold is a failure line.
 */
export async function runSuiteTest(
  test: SuiteTest,
  engines: StageEngines,
  prepare?: (e: EmbeddedEngine) => Promise<void>,
): Promise<TestOutcome> {
  const outcome: TestOutcome = { assertions: 0, passed: 0, skipped: 0, failures: [] };
  const judge = async (what: string, errorCode: number | undefined, ask: () => Promise<(got: unknown) => string | undefined>) => {
    outcome.assertions++;
    let verdict: string | undefined;
    try {
      const compare = await ask();
      verdict = errorCode ? `expected error ${errorCode}, got an answer` : compare(undefined);
    } catch (err) {
      if (!errorCode) verdict = `unexpected error ${describeError(err)}`;
      else if (!isOpenFgaError(err, errorCode)) verdict = `expected error ${errorCode}, got ${describeError(err)}`;
    }
    if (verdict) outcome.failures.push(`${what}: ${verdict}`);
    else outcome.passed++;
  };
  for (const [i, stage] of test.stages.entries()) {
    const engine = i === 0 ? await engines.first(stage.model) : await engines.next(stage.model);
    if (stage.tuples?.length) await engine.write(stage.tuples, []);
    await prepare?.(engine);
    const at = `stage ${i + 1}`;
    for (const a of stage.checkAssertions ?? []) {
      const { user, relation, object } = a.tuple;
      await judge(`${at} check ${user} ${relation} ${object} ${JSON.stringify(a.context ?? {})}`, a.errorCode, async () => {
        const got = await engine.check({ user, relation, object, contextualTuples: a.contextualTuples, context: a.context });
        return () => (got === (a.expectation ?? false) ? undefined : `expected ${a.expectation}, got ${got}`);
      });
    }
    for (const a of stage.listObjectsAssertions ?? []) {
      const { user, type, relation } = a.request;
      await judge(`${at} list_objects ${user} ${relation} ${type} ${JSON.stringify(a.context ?? {})}`, a.errorCode, async () => {
        const got = await engine.listObjects(user, relation, type, { contextualTuples: a.contextualTuples, context: a.context });
        const want = a.expectation ?? [];
        return () => (sameSet(got, want) ? undefined : `expected [${want.join(', ')}], got [${got.join(', ')}]`);
      });
    }
    for (const a of stage.listUsersAssertions ?? []) {
      const { filters, object, relation } = a.request;
      if (a.temporarilySkipReason) {
        outcome.assertions++;
        outcome.skipped++;
        continue;
      }
      await judge(
        `${at} list_users ${filters.join(',')} ${relation} ${object} ${JSON.stringify(a.context ?? {})}`,
        a.errorCode,
        async () => {
          const userFilters = filters.map((f) => {
            const [type, rel] = f.split('#');
            return rel ? { type, relation: rel } : { type };
          });
          const got = await engine.listUsers({ object, relation, userFilters, contextualTuples: a.contextualTuples, context: a.context });
          const want = a.expectation ?? [];
          return () => (sameSet(got, want) ? undefined : `expected [${want.join(', ')}], got [${got.join(', ')}]`);
        },
      );
    }
  }
  return outcome;
}
