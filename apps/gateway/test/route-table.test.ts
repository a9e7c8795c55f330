import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@platform/service-kit';
import { gatewayEnv } from '../src/config';
import { registeredRoutes } from '../src/http';
import { ApiRequest, compileTrust, type Incoming, type Outgoing } from '../src/api-request';
import { sendBody } from '../src/replies';
import { routeTable } from '../src/route-table';
import { ROUTES } from '../src/sections';

// The gateway's one table of rows, over every row it registers on the deployments that register the most: which row
// a request reaches, and with which parameters, as the Express routers it replaced answered.

const rowsOf = (env: Record<string, string>) => registeredRoutes(ROUTES, loadConfig(gatewayEnv, env));

/** A server answering from the table of these rows, each answering which row it is and the parameters it got. */
async function serve(rows: { method: string; path: string }[]): Promise<{ base: string; close(): void }> {
  const table = routeTable(
    rows.map((r) => ({
      ...r,
      handler: async (req: ApiRequest) => sendBody(req.res, { row: `${r.method.toUpperCase()} ${r.path}`, params: req.params }),
    })),
  );
  const server = http.createServer((raw, res) => {
    const [, path, search = ''] = /^\/api\/v1([^?]*)\??(.*)$/.exec(raw.url!)!;
    const req = new ApiRequest(raw as Incoming, res as Outgoing, '/api/v1', path || '/', search, compileTrust(undefined));
    if (!table.serve(req)) sendBody(Object.assign(res, { statusCode: 404 }), { row: 'none' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, close: () => server.close() };
}

describe('the route table', () => {
  let t: { base: string; close(): void };
  const rows = [
    ...rowsOf({ DEPLOYMENT_TYPE: 'Hosted', RUN_MODE: 'dev', BILLING_ENABLED: 'true' }),
    // The marketplace rows, registered on marketplace deployments only.
    ...rowsOf({ DEPLOYMENT_TYPE: 'ProviderAMarketplace', BILLING_ENABLED: 'true' }).filter((r) => r.path.includes('marketplace')),
  ];
  const unique = [...new Map(rows.map((r) => [`${r.method} ${r.path}`, r])).values()];
  const reach = async (path: string, method = 'GET') => {
    const res = await fetch(`${t.base}${path}`, { method });
    return { status: res.status, ...(method === 'HEAD' ? {} : ((await res.json()) as { row: string; params?: Record<string, unknown> })) };
  };

  beforeAll(async () => {
    t = await serve(unique);
  });
  afterAll(() => t?.close());

  it('reaches every row by its own path, each parameter filled with a value of its own', async () => {
    for (const r of unique) {
      const names: string[] = [];
      const path = r.path.replace(/[:*](\w+)/g, (_m, name: string) => (names.push(name), `v-${name}`));
      const got = await reach(path, r.method.toUpperCase());
      expect({ path, row: got.row }).toEqual({ path, row: `${r.method.toUpperCase()} ${r.path}` });
      for (const name of names) expect(got.params?.[name]).toEqual(r.path.includes(`*${name}`) ? [`v-${name}`] : `v-${name}`);
    }
  });

  it('prefers a literal segment to a parameter, as the rows declare them', async () => {
    expect((await reach('/orgs/claim')).row).toBe('GET /orgs/claim');
    expect((await reach('/orgs/acme')).row).toBe('GET /orgs/:orgname');
    expect((await reach('/orgs/acme/teams/search')).row).toBe('GET /orgs/:orgname/teams/search');
  });

  it('matches a path in any case and with a trailing slash; parameters keep their case and are decoded', async () => {
    expect(await reach('/ORGS/Acme/')).toEqual({ status: 200, row: 'GET /orgs/:orgname', params: { orgname: 'Acme' } });
    expect((await reach('/orgs/a%20b')).params).toEqual({ orgname: 'a b' });
    expect((await reach(`/orgs/${'x'.repeat(300)}`)).params).toEqual({ orgname: 'x'.repeat(300) });
  });

  it('answers a trailing wildcard as its segments, HEAD as GET, and leaves what no row matches to what follows', async () => {
    expect((await reach('/objects/a/b/c.pdf')).params).toEqual({ key: ['a', 'b', 'c.pdf'] });
    expect((await reach('/orgs/acme', 'HEAD')).status).toBe(200);
    expect(await reach('/no/such/row')).toEqual({ status: 404, row: 'none' });
    expect(await reach('/orgs/acme', 'PUT')).toEqual({ status: 404, row: 'none' });
  });
});
