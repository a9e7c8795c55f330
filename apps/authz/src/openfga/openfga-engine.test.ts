import { CredentialsMethod, OpenFgaClient } from '@openfga/sdk';
import { createLogger } from '@platform/service-kit';
import { PLATFORM_MODEL_FILE } from '../engine';
import { runFgaYamlSuite } from '../engine/fga-yaml';
import type { Tuple } from '../engine/types';
import { OPENFGA_WRITE_LIMIT, OpenFgaEngine } from './openfga-engine';
import * as fs from 'node:fs';

const tuples = (n: number, from = 0): Tuple[] =>
  Array.from({ length: n }, (_, i) => ({ user: `user:${from + i}`, relation: 'member', object: 'team:1' }));

/** A stand-in for the SDK client's write: applies requests to a set and fails the n-th one. */
function fakeClient(failOnCall: number) {
  const stored = new Set<string>();
  let calls = 0;
  const client = {
    async write(body: { writes: Tuple[]; deletes: Tuple[] }) {
      calls += 1;
      if (body.writes.length + body.deletes.length > OPENFGA_WRITE_LIMIT) throw Object.assign(new Error('too many'), { statusCode: 400 });
      if (calls === failOnCall) throw Object.assign(new Error('boom'), { statusCode: 400, apiErrorMessage: 'invalid tuple' });
      for (const t of body.deletes) stored.delete(JSON.stringify(t));
      for (const t of body.writes) stored.add(JSON.stringify(t));
      return {};
    },
  };
  return { client: client as unknown as OpenFgaClient, stored, calls: () => calls };
}

describe('OpenFGA engine: writes beyond the 100-tuple limit stay all-or-nothing', () => {
  it('writes 250 tuples in chunks of at most 100', async () => {
    const fake = fakeClient(0);
    await new OpenFgaEngine(fake.client).write(tuples(250), []);
    expect(fake.stored.size).toBe(250);
    expect(fake.calls()).toBe(3);
  });

  it('undoes the chunks already applied when a later chunk fails', async () => {
    const fake = fakeClient(3);
    await expect(new OpenFgaEngine(fake.client).write(tuples(250), [])).rejects.toMatchObject({ kind: 'input', message: 'invalid tuple' });
    expect(fake.stored.size).toBe(0);
  });
});

// The conformance leg: the same .fga.yaml suite the embedded engine passes, against a real OpenFGA server.
// It runs only when OPENFGA_API_URL is set (see docs/authorization.md); a store is created per test.
const apiUrl = process.env.OPENFGA_API_URL;
if (apiUrl) {
  describe('OpenFGA engine conformance (.fga.yaml against a real server)', () => {
    runFgaYamlSuite(async ({ name, modelDsl }) => {
      const credentials = process.env.OPENFGA_API_TOKEN
        ? { method: CredentialsMethod.ApiToken as const, config: { token: process.env.OPENFGA_API_TOKEN } }
        : undefined;
      const admin = new OpenFgaClient({ apiUrl, credentials });
      const store = await admin.createStore({ name: `conformance-${name}`.slice(0, 60) });
      const engine = await OpenFgaEngine.connect({
        apiUrl,
        storeId: store.id,
        apiToken: process.env.OPENFGA_API_TOKEN,
        modelDsl: modelDsl || fs.readFileSync(PLATFORM_MODEL_FILE, 'utf8'),
        log: createLogger('conformance', 'silent'),
      });
      return { engine, dispose: async () => void (await new OpenFgaClient({ apiUrl, storeId: store.id, credentials }).deleteStore()) };
    });
  });
}
