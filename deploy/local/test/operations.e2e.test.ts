import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { eventually } from '@platform/testing';
import { bootTestPlatform, type TestPlatform } from './harness';
import { interrupt, killLaunched, npmStart, type StartedLauncher } from './launcher';

/** HTTP health and Prometheus metrics, as an operator and a prober see them. */

/** The value of one sample line of a Prometheus text answer, or undefined when it is not there. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf('}'));
    const have = inside.split(/,(?=[a-z_]+=")/);
    if (wanted.every((w) => have.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('npm start: /metrics, /healthz and /readyz on the launcher’s HTTP port', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-ops-'));
  let launcher: StartedLauncher;
  beforeAll(async () => {
    launcher = await npmStart({ DATA_DIR: dataDir, PLATFORM_ADMIN_PASSWORD: 'ops-admin-password' });
  }, 120_000);
  afterAll(async () => {
    if (launcher) await interrupt(launcher.child);
    killLaunched();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps an idle scrape small: a route’s and an RPC’s series appear with their first call, not before', async () => {
    const rpc = { grpc_type: 'unary', grpc_service: 'platformadmin.orgsteams.v1.SiteSettingsService', grpc_method: 'GetBranding' };
    const route = { server: 'gateway', http_route: '/branding', http_request_method: 'GET', http_response_status_code: '200' };
    const idle = await (await fetch(`${launcher.url}metrics`)).text();
    // Every RPC of the platform (~180) with a latency histogram made up front made this ~690 KB.
    expect(Buffer.byteLength(idle)).toBeLessThan(100_000);
    expect(sample(idle, 'grpc_server_handling_seconds_count', rpc)).toBeUndefined();
    expect(sample(idle, 'grpc_client_handling_seconds_count', rpc)).toBeUndefined();
    expect(sample(idle, 'http_server_requests_total', route)).toBeUndefined();
    // The families are there before their first event, so a dashboard's queries find them.
    for (const family of ['grpc_server_handling_seconds', 'grpc_client_handling_seconds', 'http_server_request_duration_seconds'])
      expect(idle).toContain(`# TYPE ${family} histogram`);

    expect((await fetch(`${launcher.url}api/v1/branding`)).status).toBe(200);
    const after = await (await fetch(`${launcher.url}metrics`)).text();
    expect(sample(after, 'http_server_requests_total', route)).toBe(1);
    expect(sample(after, 'http_server_request_duration_seconds_count', route)).toBe(1);
    expect(sample(after, 'grpc_server_handling_seconds_count', rpc)).toBe(1);
    expect(sample(after, 'grpc_server_handling_seconds_bucket', { ...rpc, le: '+Inf' })).toBe(1);
    expect(sample(after, 'grpc_server_handled_total', { ...rpc, grpc_code: 'OK' })).toBe(1);
    expect(sample(after, 'grpc_client_handling_seconds_count', rpc)).toBe(1);
    expect(sample(after, 'grpc_client_handled_total', { ...rpc, grpc_code: 'OK' })).toBe(1);
  });

  it('counts the requests of the routes just called, by route row, method and status, with latency, gRPC, database and process metrics', async () => {
    const before = await (await fetch(`${launcher.url}metrics`)).text();
    expect(sample(before, 'http_server_requests_total', { http_route: '/version', http_request_method: 'GET' })).toBeUndefined();

    for (let i = 0; i < 2; i++) expect((await fetch(`${launcher.url}api/v1/version`)).status).toBe(200);
    const basic = `Basic ${Buffer.from('admin:ops-admin-password').toString('base64')}`;
    const created = await fetch(`${launcher.url}api/v1/users/admin/tokens`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'metrics' }),
    });
    expect(created.status).toBe(201);
    expect((await fetch(`${launcher.url}api/v1/orgs/no-such-org`)).status).toBe(404);

    const res = await fetch(`${launcher.url}metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const gateway = { server: 'gateway' };
    expect(
      sample(text, 'http_server_requests_total', {
        ...gateway,
        http_route: '/version',
        http_request_method: 'GET',
        http_response_status_code: '200',
      }),
    ).toBe(2);
    expect(
      sample(text, 'http_server_requests_total', {
        ...gateway,
        http_route: '/users/:username/tokens',
        http_request_method: 'POST',
        http_response_status_code: '201',
      }),
    ).toBe(1);
    expect(
      sample(text, 'http_server_requests_total', {
        ...gateway,
        http_route: '/orgs/:orgname',
        http_request_method: 'GET',
        http_response_status_code: '404',
      }),
    ).toBe(1);
    expect(
      sample(text, 'http_server_request_duration_seconds_count', {
        ...gateway,
        http_route: '/version',
        http_request_method: 'GET',
        http_response_status_code: '200',
      }),
    ).toBe(2);
    expect(
      sample(text, 'http_server_request_duration_seconds_bucket', {
        ...gateway,
        http_route: '/version',
        http_request_method: 'GET',
        http_response_status_code: '200',
        le: '+Inf',
      }),
    ).toBe(2);
    // The backends' side of the same calls, and the clients' side.
    expect(
      sample(text, 'grpc_server_handled_total', {
        grpc_service: 'platformadmin.orgsteams.v1.OrgsTeamsService',
        grpc_method: 'GetVersion',
        grpc_code: 'OK',
      }),
    ).toBe(2);
    expect(
      sample(text, 'grpc_client_handled_total', {
        grpc_service: 'platformadmin.orgsteams.v1.OrgsTeamsService',
        grpc_method: 'GetVersion',
        grpc_code: 'OK',
      }),
    ).toBe(2);
    expect(
      sample(text, 'grpc_server_handling_seconds_count', {
        grpc_service: 'platformadmin.orgsteams.v1.OrgsTeamsService',
        grpc_method: 'GetVersion',
      }),
    ).toBe(2);
    // The database (one embedded pool for the whole process) and the process itself.
    expect(sample(text, 'db_query_duration_seconds_count', { pool: 'embedded', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sample(text, 'db_pool_connections', { pool: 'embedded', state: 'used' })).toBeGreaterThanOrEqual(0);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    // Metric families that exist before their first event.
    for (const family of ['authz_checks_total', 'bus_messages_published_total', 'bus_messages_consumed_total'])
      expect(text).toContain(`# TYPE ${family} counter`);
  });

  it('answers /healthz and /readyz with JSON, never the frontend page; unknown API paths stay 404 JSON', async () => {
    const live = await fetch(`${launcher.url}healthz`);
    expect(live.status).toBe(200);
    expect(live.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await live.json()).toEqual({ status: 'alive' });

    const ready = await fetch(`${launcher.url}readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: {
        bus: 'up',
        authz: 'up',
        'orgs-teams': 'up',
        'contracts-licensing': 'up',
        'billing-dashboard': 'up',
        metricsproxy: 'up',
        'marketplace-listener': 'up',
        clusters: 'up',
      },
      required: ['authz', 'orgs-teams'],
    });

    const posted = await fetch(`${launcher.url}metrics`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('content-type')).toMatch(/^application\/json/);
    const docs = await fetch(`${launcher.url}docs`, { redirect: 'manual' });
    expect([docs.status, docs.headers.get('location')]).toEqual([301, '/api/v1/docs/']);
    for (const p of ['api/v1/healthz', 'api/v1/metrics', 'api/v1/no/such/route']) {
      const res = await fetch(`${launcher.url}${p}`);
      expect({ path: p, status: res.status, type: res.headers.get('content-type') }).toEqual({
        path: p,
        status: 404,
        type: expect.stringMatching(/^application\/json/),
      });
    }
    // Other non-API paths still fall through to the web frontend.
    expect((await fetch(`${launcher.url}some/page`)).headers.get('content-type')).toMatch(/^text\/html/);
  });
});

describe('/readyz follows the backends the gateway needs (real Postgres and NATS)', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await bootTestPlatform();
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
  });

  const readyz = async () => {
    const res = await fetch(`${t.platform.url}readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
  };

  it('turns 503 not ready while a required backend (authz) is stopped, and ready again when it is back', async () => {
    expect((await readyz()).status).toBe(200);
    await t.platform.stopApp('authz');
    const down = await readyz();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'not ready', checks: { authz: 'down', 'orgs-teams': 'up' } });

    await t.platform.startApp('authz');
    await eventually(async () => (await readyz()).status === 200, 10_000, 100);
    expect((await readyz()).body).toMatchObject({ status: 'ready', checks: { authz: 'up' } });
  }, 60_000);

  it('stays ready while an optional backend (clusters) is stopped, reporting it down', async () => {
    await t.platform.stopApp('clusters');
    try {
      const res = await readyz();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'ready', checks: { clusters: 'down', authz: 'up', 'orgs-teams': 'up' } });
    } finally {
      await t.platform.startApp('clusters');
    }
    await eventually(async () => (await readyz()).body.checks.clusters === 'up', 10_000, 100);
  }, 60_000);

  it('answers the marketplace listener’s own /healthz and /readyz (its database) on its HTTP port', async () => {
    const port = t.platform.apps.get('marketplace-listener')!.httpPort;
    const live = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect([live.status, await live.json()]).toEqual([200, { status: 'alive' }]);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready', checks: { database: 'up' }, required: ['database'] }]);
  });
});
