import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { MODEL_DIR } from './model';
import type { AuthzEngine, Tuple } from './types';

/** A `check` entry of a `.fga.yaml` test: for each relation, whether the user holds it on the object. */
export interface FgaYamlCheck {
  user: string;
  object: string;
  context?: Record<string, unknown>;
  contextual_tuples?: Tuple[];
  assertions: Record<string, boolean>;
}

/** A `list_objects` entry: for each relation, exactly which objects of the type the user holds it on. */
export interface FgaYamlListObjects {
  user: string;
  type: string;
  context?: Record<string, unknown>;
  contextual_tuples?: Tuple[];
  assertions: Record<string, string[]>;
}

/** A `list_users` entry: for each relation, exactly which users of the filters' kinds hold it on the object. */
export interface FgaYamlListUsers {
  object: string;
  user_filter: { type: string; relation?: string }[];
  context?: Record<string, unknown>;
  contextual_tuples?: Tuple[];
  assertions: Record<string, { users: string[] }>;
}

/** One test of a `.fga.yaml` file; its tuples come on top of the file's. */
export interface FgaYamlTest {
  name: string;
  description?: string;
  tuples?: Tuple[];
  tuple_file?: string;
  check?: FgaYamlCheck[];
  list_objects?: FgaYamlListObjects[];
  list_users?: FgaYamlListUsers[];
}

/** A loaded `.fga.yaml` file (the format of `fga model test`), with its model and tuple files read in. */
export interface FgaYamlSuite {
  name: string;
  modelDsl: string;
  tuples: Tuple[];
  tests: (FgaYamlTest & { tuples: Tuple[] })[];
}

/** The platform model's test file. */
export const PLATFORM_FGA_YAML = path.join(MODEL_DIR, 'platform.fga.yaml');

/** OpenFGA's documented behaviour of conditions, list-users and contextual tuples in list-objects, as a test file. */
export const CONDITIONS_FGA_YAML = path.join(__dirname, 'test', 'conditions.fga.yaml');

/** Reads a `.fga.yaml` file; `model_file` and `tuple_file` are relative to it, as for the fga CLI. */
export function loadFgaYaml(file: string = PLATFORM_FGA_YAML): FgaYamlSuite {
  const dir = path.dirname(file);
  const doc = YAML.parse(fs.readFileSync(file, 'utf8'));
  const readTuples = (inline: Tuple[] | undefined, tupleFile: string | undefined): Tuple[] => [
    ...(inline ?? []),
    ...(tupleFile ? (YAML.parse(fs.readFileSync(path.resolve(dir, tupleFile), 'utf8')) as Tuple[]) : []),
  ];
  const modelDsl: string = doc.model ?? fs.readFileSync(path.resolve(dir, doc.model_file), 'utf8');
  return {
    name: doc.name ?? path.basename(file),
    modelDsl,
    tuples: readTuples(doc.tuples, doc.tuple_file),
    tests: (doc.tests ?? []).map((t: FgaYamlTest) => ({ ...t, tuples: readTuples(t.tuples, t.tuple_file) })),
  };
}

/** Runs one test's assertions against an engine that already holds its tuples; returns the failures, one line each. */
export async function runFgaYamlTest(engine: AuthzEngine, test: FgaYamlTest): Promise<string[]> {
  const failures: string[] = [];
  const same = (got: string[], want: string[]) => JSON.stringify(got) === JSON.stringify(want);
  for (const c of test.check ?? []) {
    for (const [relation, expected] of Object.entries(c.assertions)) {
      const got = await engine.check({
        user: c.user,
        relation,
        object: c.object,
        contextualTuples: c.contextual_tuples,
        context: c.context,
      });
      if (got !== expected) failures.push(`check ${c.user} ${relation} ${c.object}: expected ${expected}, got ${got}`);
    }
  }
  for (const u of test.list_users ?? []) {
    for (const [relation, expected] of Object.entries(u.assertions)) {
      const got = await engine.listUsers({
        object: u.object,
        relation,
        userFilters: u.user_filter,
        contextualTuples: u.contextual_tuples,
        context: u.context,
      });
      const want = [...(expected?.users ?? [])].sort();
      if (!same(got, want)) failures.push(`list_users ${relation} ${u.object}: expected [${want.join(', ')}], got [${got.join(', ')}]`);
    }
  }
  for (const l of test.list_objects ?? []) {
    for (const [relation, expected] of Object.entries(l.assertions)) {
      const options = { contextualTuples: l.contextual_tuples, context: l.context };
      const got = [...(await engine.listObjects(l.user, relation, l.type, options))].sort();
      const want = [...(expected ?? [])].sort();
      if (!same(got, want)) {
        failures.push(`list_objects ${l.user} ${relation} ${l.type}: expected [${want.join(', ')}], got [${got.join(', ')}]`);
      }
    }
  }
  return failures;
}

/** An engine for one test, holding no tuples yet, and how to throw it away afterwards. */
export type MakeEngine = (test: { name: string; modelDsl: string }) => Promise<{ engine: AuthzEngine; dispose?: () => Promise<void> }>;

/**
 * Registers one jest test per `.fga.yaml` test: a fresh engine from makeEngine gets the file's and the test's
 * tuples, then every check and list_objects assertion must hold. Test support: call it from a `*.test.ts`
 * (the embedded engine always; an OpenFGA server's engine when one is configured).
 */
export function runFgaYamlSuite(makeEngine: MakeEngine, file: string = PLATFORM_FGA_YAML): void {
  const suite = loadFgaYaml(file);
  describe(`${suite.name} (${path.basename(file)})`, () => {
    for (const test of suite.tests) {
      it(test.name, async () => {
        const { engine, dispose } = await makeEngine({ name: test.name, modelDsl: suite.modelDsl });
        try {
          await engine.write([...suite.tuples, ...test.tuples], []);
          expect(await runFgaYamlTest(engine, test)).toEqual([]);
        } finally {
          await dispose?.();
        }
      });
    }
  });
}
