import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, loadConfig } from '@platform/service-kit';
import type { Backends } from '../src/backends';
import { gatewayEnv } from '../src/config';
import { createGatewayHttp } from '../src/http';
import { metricsProxyRoutes } from '../src/sections/metricsproxy/routes';

// The metrics-proxy auth hook (docs/metrics-proxy.md): a caller who may not read a cluster's metrics gets one answer,
// after the same backend calls, whether the uid and cluster exist or are another tenant's, and it names neither the
// owner nor the cluster; the owner and its members still get 200, or 404 for a cluster the owner does not have.

const DEMO = 10;
const PROD = '0b7d4c1e-5f0a-4c5e-9d7b-2a1f6e3c9b10';
const MINE = '6a1d3c0e-1111-4c5e-9d7b-2a1f6e3c9b10';
const NONE = '00000000-0000-4000-8000-000000000000';
const USERS: Record<string, number> = { mallory: 1, bob: 2 };

/** Every backend call the hook made, past authentication. */
const calls: string[] = [];

const backends = {
  orgsTeams: {
    identity: {
      authenticate: async ({ token }: { token: string }) => ({
        user: { id: USERS[token], login: token, active: true },
        scope: '',
        scopeAccountId: 0,
        accessScopes: ['all'],
      }),
      getAccounts: async ({ ids }: { ids: number[] }) => {
        calls.push(`getAccounts ${ids}`);
        const accounts = [
          { id: DEMO, login: 'demo', type: 1 },
          { id: 1, login: 'mallory', type: 0 },
        ];
        return { users: accounts.filter((a) => ids.includes(a.id)) };
      },
    },
  },
  authz: {
    authz: {
      checkPermission: async ({ userId, permission, objectId }: { userId: number; permission: string; objectId: number }) => {
        calls.push(`checkPermission ${permission}`);
        return { allowed: userId === USERS.bob && objectId === DEMO && permission === 'member:org', dependsOn: [] };
      },
    },
  },
  clusters: {
    clusters: {
      getClusters: async ({ uids }: { uids: string[] }) => {
        calls.push('getClusters');
        const all = [
          { uid: PROD, name: 'prod-eastus', ownerId: DEMO },
          { uid: MINE, name: 'laptop', ownerId: 1 },
        ];
        return { clusters: all.filter((c) => uids.includes(c.uid)) };
      },
    },
  },
  metricsproxy: {
    metricsproxy: {
      lookupBackend: async () => {
        calls.push('lookupBackend');
        return { found: false, clientOrgId: '' };
      },
    },
  },
} as unknown as Backends;

describe('the metrics-proxy auth hook', () => {
  let base: string;
  let server: http.Server;
  beforeAll(async () => {
    const config = loadConfig(gatewayEnv, { LOG_LEVEL: 'silent' });
    server = http.createServer(createGatewayHttp({ routes: metricsProxyRoutes, backends, config, log: createLogger('test', 'silent') }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(() => server.close());
  beforeEach(() => (calls.length = 0));

  /** The answer as bytes, with the headers that differ on every response (its date and request id) left out. */
  const hook = async (who: string, uidcid: string) => {
    calls.length = 0;
    const res = await fetch(`${base}/metricsproxy/auth/${uidcid}/api/v1/query`, { headers: { authorization: `token ${who}` } });
    const headers = Object.fromEntries([...res.headers].filter(([name]) => !['date', 'x-request-id'].includes(name)));
    return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()).toString('latin1'), calls: [...calls] };
  };

  it("refuses a stranger byte for byte alike for another tenant's cluster, an unknown cluster and an unknown owner", async () => {
    const theirs = await hook('mallory', `${DEMO}.${PROD}`);
    expect(theirs.status).toBe(401);
    expect(theirs.body).not.toMatch(/demo|prod-eastus|0b7d4c1e/);
    expect(JSON.parse(theirs.body).message).toMatch(/^you may not read the metrics of this cluster/);
    expect(theirs.calls).toEqual(['checkPermission member:org']);
    for (const other of [`${DEMO}.${NONE}`, `999999.${PROD}`, `999999.${NONE}`, `${DEMO}.${PROD}.proj-1`]) {
      expect({ other, ...(await hook('mallory', other)) }).toEqual({ other, ...theirs });
    }
  });

  it('lets the members of the owning organization and the owning user through, and tells them of a cluster the owner lacks', async () => {
    const member = await hook('bob', `${DEMO}.${PROD}`);
    expect(member.status).toBe(200);
    expect(JSON.parse(member.body)).toEqual({ owner: 'demo', clusterName: 'prod-eastus', tenantID: `${DEMO}.${PROD}` });
    expect(member.headers['x-scope-orgid']).toBe(`${DEMO}.${PROD}`);
    const owner = await hook('mallory', `1.${MINE}`);
    expect(JSON.parse(owner.body)).toEqual({ owner: 'mallory', clusterName: 'laptop', tenantID: `1.${MINE}` });
    expect(owner.calls).not.toContain('checkPermission member:org');
    const missing = await hook('bob', `${DEMO}.${NONE}`);
    expect({ status: missing.status, message: JSON.parse(missing.body).message }).toEqual({
      status: 404,
      message: `account ${DEMO} has no cluster ${NONE}`,
    });
    // A member asking under its organization's uid for another owner's cluster learns only that it is not theirs.
    expect((await hook('bob', `${DEMO}.${MINE}`)).status).toBe(404);
    expect((await hook('bob', `1.${MINE}`)).status).toBe(401);
  });
});
