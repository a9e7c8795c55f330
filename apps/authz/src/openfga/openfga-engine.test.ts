import { CredentialsMethod, OpenFgaClient } from '@openfga/sdk';
import { createLogger } from '@platform/service-kit';
import { PLATFORM_MODEL_FILE } from '../engine';
import { CONDITIONS_FGA_YAML, runFgaYamlSuite, type MakeEngine } from '../engine/fga-yaml';
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

describe('OpenFGA engine: what it sends for conditions, list-users and list-objects', () => {
  it("sends a tuple's condition on write and none on delete, a check's context, and reads the condition back", async () => {
    const sent: unknown[] = [];
    const client = {
      write: async (body: unknown) => (sent.push(body), {}),
      check: async (body: unknown) => (sent.push(body), { allowed: true }),
      read: async () => ({
        tuples: [
          { key: { user: 'user:1', relation: 'viewer', object: 'doc:1', condition: { name: 'not_after', context: { expires_at: 'x' } } } },
        ],
        continuation_token: '',
      }),
    } as unknown as OpenFgaClient;
    const engine = new OpenFgaEngine(client);
    const condition = { name: 'not_after', context: { expires_at: '2030-01-01T00:00:00Z' } };
    await engine.write(
      [{ user: 'user:1', relation: 'viewer', object: 'doc:1', condition }],
      [{ user: 'user:2', relation: 'viewer', object: 'doc:1', condition }],
    );
    expect(sent[0]).toEqual({
      writes: [{ user: 'user:1', relation: 'viewer', object: 'doc:1', condition }],
      deletes: [{ user: 'user:2', relation: 'viewer', object: 'doc:1' }],
    });
    await engine.check({ user: 'user:1', relation: 'viewer', object: 'doc:1', context: { current_time: 'now' } });
    expect(sent[1]).toMatchObject({ user: 'user:1', context: { current_time: 'now' } });
    expect(await engine.readTuples({ object: 'doc:1' })).toEqual([
      { user: 'user:1', relation: 'viewer', object: 'doc:1', condition: { name: 'not_after', context: { expires_at: 'x' } } },
    ]);
  });

  it('asks ListUsers with the object split and the filters, and answers users, usersets and wildcards as strings', async () => {
    let asked: unknown;
    const client = {
      listUsers: async (body: unknown) => {
        asked = body;
        return {
          users: [
            { object: { type: 'user', id: 'b' } },
            { wildcard: { type: 'user' } },
            { userset: { type: 'team', id: '5', relation: 'member' } },
          ],
        };
      },
      listObjects: async (body: unknown) => ((asked = body), { objects: ['doc:2', 'doc:1'] }),
    } as unknown as OpenFgaClient;
    const engine = new OpenFgaEngine(client);
    const users = await engine.listUsers({
      object: 'doc:1',
      relation: 'viewer',
      userFilters: [{ type: 'user' }, { type: 'team', relation: 'member' }],
      context: { ip: '10.0.0.1' },
    });
    expect(users).toEqual(['team:5#member', 'user:*', 'user:b']);
    expect(asked).toMatchObject({
      object: { type: 'doc', id: '1' },
      relation: 'viewer',
      user_filters: [{ type: 'user' }, { type: 'team', relation: 'member' }],
      context: { ip: '10.0.0.1' },
    });
    const contextual = [{ user: 'user:b', relation: 'viewer', object: 'doc:3' }];
    expect(await engine.listObjects('user:b', 'viewer', 'doc', { contextualTuples: contextual })).toEqual(['doc:1', 'doc:2']);
    expect(asked).toMatchObject({ user: 'user:b', relation: 'viewer', type: 'doc', contextualTuples: contextual });
  });
});

// The conformance leg: the same .fga.yaml suite the embedded engine passes, against a real OpenFGA server.
// It runs only when OPENFGA_API_URL is set (see docs/authorization.md); a store is created per test.
const apiUrl = process.env.OPENFGA_API_URL;
if (apiUrl) {
  describe('OpenFGA engine conformance (.fga.yaml against a real server)', () => {
    const makeEngine: MakeEngine = async ({ name, modelDsl }) => {
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
    };
    runFgaYamlSuite(makeEngine);
    runFgaYamlSuite(makeEngine, CONDITIONS_FGA_YAML);
  });
}
