import { CONDITIONS_FGA_YAML, runFgaYamlSuite, runFgaYamlTest } from './fga-yaml';
import { openEngineDatabase } from './test/engine-db';

// The model's own .fga.yaml tests, run against the embedded engine; each test gets a fresh schema.
let database: Awaited<ReturnType<typeof openEngineDatabase>>;

beforeAll(async () => {
  database = await openEngineDatabase();
});

afterAll(async () => {
  await database?.close();
});

runFgaYamlSuite(({ modelDsl }) => database.engine(modelDsl));
// OpenFGA's documented behaviour of conditions, list-users and contextual tuples in list-objects.
runFgaYamlSuite(({ modelDsl }) => database.engine(modelDsl), CONDITIONS_FGA_YAML);

describe('runFgaYamlTest', () => {
  it('reports every assertion that does not hold', async () => {
    const { engine, dispose } = await database.engine();
    try {
      await engine.write([{ user: 'user:anne', relation: 'owner', object: 'organization:acme' }], []);
      const failures = await runFgaYamlTest(engine, {
        name: 'wrong on purpose',
        check: [{ user: 'user:anne', object: 'organization:acme', assertions: { edit: false, owner: true } }],
        list_objects: [{ user: 'user:anne', type: 'organization', assertions: { member: [] } }],
      });
      expect(failures).toEqual([
        'check user:anne edit organization:acme: expected false, got true',
        'list_objects user:anne member organization: expected [], got [organization:acme]',
      ]);
    } finally {
      await dispose();
    }
  });
});
