import { DomainError, NotFoundError } from '@platform/errors';
import { apiDocument } from '../src/openapi';
import { ROUTES } from '../src/sections';
import type { FakeBackends } from './fake-backends';
import { expectOnlyMembersThrough, startEchoUpstream, startForwardAuthProxy } from './metrics-reverse-proxies';
import { ACME, EDGE, PROD, THEIRS, UNKNOWN, startMetricsProxyStandIns } from './metricsproxy-stand-ins';
import type { TestGateway } from './test-gateway';

// The metrics-proxy rows (docs/metrics-proxy.md) against stand-in backends: who may register and unregister, the
// inventory check before metricsproxy is asked, the bodies refused naming their field, what metricsproxy is asked
// and its answer in the API's shape, its failures passed on, and the auth hook's answer, alone and behind a
// forward-auth reverse proxy. What the dashboards receive: apps/metricsproxy/test/dashboards.int.test.ts.

const CA = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUY2E=\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nMIIBY2VydA==\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIEa2V5LXNlY3JldA==\n-----END PRIVATE KEY-----\n';
const PASSWORD = 'prom-password-s3cret';
const URL = 'https://prom.acme.example:9090';
const backend = {
  url: URL,
  basicAuth: { username: 'reader', password: PASSWORD },
  tls: { ca: CA, cert: CERT, key: KEY, serverName: 'prom.acme.example' },
};
const ROUTE_PATHS = [
  '/metricsproxy/register',
  '/metricsproxy/flavorb/register',
  '/metricsproxy/unregister',
  '/metricsproxy/flavorb/unregister',
];

describe('the metrics-proxy rows', () => {
  let backends: FakeBackends;
  let gateway: TestGateway;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ backends, gateway, close } = await startMetricsProxyStandIns());
  });
  afterAll(() => close?.());
  beforeEach(() => backends.reset());

  const call = async (who: string | undefined, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gateway.base}/api/v1${path}`, {
      method,
      headers: { ...(who && { authorization: `token ${who}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
  const post = (path: string, body: unknown, who = 'olivia', org = 'acme') => call(who, 'POST', `${path}?org=${org}`, body);
  type Write = 'registerFlavorA' | 'registerFlavorB' | 'unregisterFlavorA' | 'unregisterFlavorB';
  const asked = <M extends Write>(method: M) => backends.metricsproxy.callsTo('metricsproxy', method);
  const askedAnything = () => backends.metricsproxy.calls.filter((c) => !c.method.endsWith('lookupBackend')).length;

  it("asks metricsproxy with the organization, the inventory's cluster and hub and the backend, and answers the connection without secrets", async () => {
    const a = await post('/metricsproxy/register', { clusterUID: PROD.toUpperCase(), backend, clientOrgID: 'client-7', default: true });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({
      flavora: {
        url: 'https://from-metricsproxy.example',
        basicAuth: { username: 'reader' },
        tls: { ca: CA, cert: CERT, serverName: 'prom.acme.example', insecureSkipTLSVerify: false },
        dashboard: { datasource: `${ACME.id}.${PROD}`, folderID: 3 },
      },
      folderID: 3,
      datasource: `${ACME.id}.${PROD}`,
    });
    expect(JSON.stringify(a.body)).not.toMatch(new RegExp(`${PASSWORD}|PRIVATE KEY`));
    expect(asked('registerFlavorA')).toEqual([
      {
        context: {
          ownerId: ACME.id,
          ownerName: 'acme',
          hubUid: '',
          clusterUid: PROD,
          projectId: '',
          clientOrgId: 'client-7',
          isDefault: true,
          issueToken: false,
        },
        backend: {
          url: URL,
          basicAuth: { username: 'reader', password: PASSWORD },
          bearerToken: '',
          tls: { ca: CA, cert: CERT, key: KEY, serverName: 'prom.acme.example', insecureSkipTlsVerify: false },
        },
      },
    ]);
    const b = await post('/metricsproxy/flavorb/register', { hubUID: PROD, clusterUID: PROD, projectId: 'team-x', backend: { url: URL } });
    expect(b.body).toEqual({
      flavorb: {
        url: 'https://from-metricsproxy.example',
        dashboard: { projectName: `org-${ACME.id}`, folderName: 'acme', datasource: `${ACME.id}.${PROD}` },
      },
      projectName: `org-${ACME.id}`,
      folderName: 'acme',
      datasource: `${ACME.id}.${PROD}`,
    });
    expect(asked('registerFlavorB')[0].context).toMatchObject({ hubUid: PROD, clusterUid: PROD, projectId: 'team-x' });
    for (const path of ['/metricsproxy/unregister', '/metricsproxy/flavorb/unregister'])
      expect(await post(path, { clusterUID: PROD })).toMatchObject({ status: 200, body: undefined });
    expect(asked('unregisterFlavorB')).toEqual([expect.objectContaining({ ownerId: ACME.id, clusterUid: PROD })]);
  });

  it('401 without a token, 403 for a member who is not an admin and for a stranger, 400 without org; metricsproxy not asked', async () => {
    for (const path of ROUTE_PATHS) {
      const body = { clusterUID: PROD, backend };
      expect({ path, status: (await call(undefined, 'POST', `${path}?org=acme`, body)).status }).toEqual({ path, status: 401 });
      expect({ path, status: (await post(path, body, 'bob')).status }).toEqual({ path, status: 403 });
      expect({ path, status: (await post(path, body, 'mallory')).status }).toEqual({ path, status: 403 });
      expect({ path, status: (await call('olivia', 'POST', path, body)).status }).toEqual({ path, status: 400 });
    }
    expect(askedAnything()).toBe(0);
  });

  it("refuses another organization's cluster or an unknown one (403) before metricsproxy is asked; unregister takes a cluster gone from the inventory", async () => {
    for (const path of ['/metricsproxy/register', '/metricsproxy/flavorb/register']) {
      for (const clusterUID of [THEIRS, UNKNOWN]) {
        const res = await post(path, { clusterUID, backend });
        expect({ path, clusterUID, status: res.status }).toEqual({ path, clusterUID, status: 403 });
        expect(res.body.message).toMatch(/is not a cluster of organization acme/);
      }
      expect((await post(path, { clusterUID: PROD, hubUID: THEIRS, backend })).status).toBe(403);
      // Not that hub's cluster.
      expect((await post(path, { clusterUID: PROD, hubUID: EDGE, backend })).status).toBe(422);
    }
    expect((await post('/metricsproxy/unregister', { clusterUID: THEIRS })).status).toBe(403);
    expect(askedAnything()).toBe(0);
    backends.metricsproxy.answer('metricsproxy', 'unregisterFlavorB', async () => {
      throw new NotFoundError(`no flavor B metrics backend is registered for ${ACME.id}.${UNKNOWN}`);
    });
    const gone = await post('/metricsproxy/flavorb/unregister', { clusterUID: UNKNOWN });
    expect(gone.status).toBe(404);
    expect(gone.body.message).toMatch(/no flavor B metrics backend is registered/);
    expect(asked('unregisterFlavorB')).toEqual([expect.objectContaining({ ownerId: ACME.id, clusterUid: UNKNOWN })]);
    // The other organization's owner registers its own cluster.
    expect((await post('/metricsproxy/register', { clusterUID: THEIRS, backend }, 'mallory', 'other')).status).toBe(200);
  });

  it('422 for a body without backend or with a malformed one, naming the field, on both register rows; metricsproxy not asked', async () => {
    const bad: [unknown, string][] = [
      [{ clusterUID: PROD }, 'backend'],
      [{ backend }, 'clusterUID'],
      [{ clusterUID: 'not-a-uuid', backend }, 'clusterUID'],
      [{ clusterUID: PROD, backend: {} }, 'backend.url'],
      [{ clusterUID: PROD, backend: { url: 'ftp://prom' } }, 'backend.url'],
      [{ clusterUID: PROD, backend: { url: 'not a url' } }, 'backend.url'],
      [{ clusterUID: PROD, backend: { service: { name: 'prom', namespace: 'mon', port: '99999' } } }, 'backend.service.port'],
      [{ clusterUID: PROD, backend: { service: { name: 'prom', namespace: 'mon', port: 'http' } } }, 'backend.service.port'],
      [{ clusterUID: PROD, backend: { url: URL, tls: { ca: 'not pem' } } }, 'backend.tls.ca'],
      [{ clusterUID: PROD, backend: { url: URL, tls: { cert: CERT } } }, 'backend.tls.key'],
      [{ clusterUID: PROD, backend: { url: URL, basicAuth: { username: 'x', password: 'y' }, bearerToken: 'z' } }, 'backend.bearerToken'],
      [{ clusterUID: PROD, projectId: 'a.b', backend }, 'projectId'],
      [{ clusterUID: '', hubUID: null, backend: { url: URL } }, 'clusterUID'],
      [
        { clusterUID: PROD, backend: { url: '', service: { name: 'prometheus', namespace: '', port: '9090' } } },
        'backend.service.namespace',
      ],
      [{ clusterUID: PROD, backend: { url: URL, basicAuth: { username: 'reader', password: '' } } }, 'backend.basicAuth.password'],
    ];
    for (const [body, field] of bad) {
      for (const path of ['/metricsproxy/register', '/metricsproxy/flavorb/register']) {
        const res = await post(path, body);
        expect({ path, field, status: res.status }).toEqual({ path, field, status: 422 });
        expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(`body.${field}`);
      }
    }
    expect(askedAnything()).toBe(0);
  });

  it("takes a Go agent's body (every field, zero where unset): the url used over a service, a service alone, null pointers", async () => {
    const ZERO_TLS = { ca: '', cert: '', key: '', serverName: '', insecureSkipTLSVerify: false };
    const context = { hubUID: '', clusterUID: PROD, projectId: '', default: false, issueToken: false, clientOrgID: '' };
    const both = await post('/metricsproxy/register', {
      ...context,
      backend: {
        url: URL,
        service: { scheme: 'http', name: 'prometheus', namespace: 'monitoring', port: '9090', path: '', query: '' },
        basicAuth: { username: 'reader', password: PASSWORD },
        bearerToken: '',
        tls: ZERO_TLS,
      },
    });
    expect(both.body.flavora).toEqual({
      url: 'https://from-metricsproxy.example',
      basicAuth: { username: 'reader' },
      dashboard: { datasource: `${ACME.id}.${PROD}`, folderID: 3 },
    });
    expect(asked('registerFlavorA')[0].backend).toMatchObject({ url: URL, service: undefined, tls: undefined, bearerToken: '' });
    const service = await post('/metricsproxy/flavorb/register', {
      ...context,
      backend: {
        url: '',
        service: { scheme: '', name: 'prometheus', namespace: 'monitoring', port: '9090', path: '', query: '' },
        basicAuth: { username: '', password: '' },
        bearerToken: '',
        tls: ZERO_TLS,
      },
    });
    expect(service.body.flavorb).toMatchObject({ service: { name: 'prometheus', namespace: 'monitoring', port: '9090' } });
    expect(service.body.flavorb).not.toHaveProperty('basicAuth');
    expect(service.body.flavorb).not.toHaveProperty('tls');
    const nulls = { clusterUID: PROD, hubUID: null, projectId: null, clientOrgID: null };
    expect(
      (
        await post('/metricsproxy/register', {
          ...nulls,
          backend: { url: URL, service: null, basicAuth: null, bearerToken: null, tls: null },
        })
      ).status,
    ).toBe(200);
    expect((await post('/metricsproxy/unregister', context)).status).toBe(200);
    expect(asked('unregisterFlavorA')).toEqual([expect.objectContaining({ clusterUid: PROD, hubUid: '', projectId: '' })]);
  });

  it('passes on a failing dashboard: 502 and 503 with their messages', async () => {
    backends.metricsproxy.answer('metricsproxy', 'registerFlavorA', async () => {
      throw new DomainError('unavailable', 'flavor A answered 500 to POST /api/datasources', { httpStatus: 502 });
    });
    const failed = await post('/metricsproxy/register', { clusterUID: PROD, backend });
    expect({ status: failed.status, message: failed.body.message }).toEqual({
      status: 502,
      message: 'flavor A answered 500 to POST /api/datasources',
    });
    backends.metricsproxy.answer('metricsproxy', 'registerFlavorB', async () => {
      throw new DomainError('unavailable', 'flavor B (127.0.0.1:1) is unreachable: POST /api/v1/projects', { httpStatus: 503 });
    });
    const down = await post('/metricsproxy/flavorb/register', { clusterUID: PROD, backend });
    expect({ status: down.status, message: down.body.message }).toMatchObject({
      status: 503,
      message: expect.stringMatching(/flavor B .* unreachable/),
    });
  });

  it('the API document says an empty string or null is accepted for the optional fields', () => {
    const schemas = (apiDocument(ROUTES) as { components: { schemas: Record<string, any> } }).components.schemas;
    const config = schemas.BackendConfig;
    for (const field of ['url', 'bearerToken'])
      expect(config.properties[field].anyOf).toEqual(expect.arrayContaining([{ type: 'string', const: '' }, { type: 'null' }]));
    for (const field of ['service', 'basicAuth', 'tls'])
      expect(config.properties[field].anyOf).toEqual(expect.arrayContaining([{ type: 'null' }]));
    expect(config.description).toMatch(/with both url and service, url is used/);
    for (const field of ['hubUID', 'clusterUID', 'projectId', 'clientOrgID'])
      expect(schemas.MetricsBackendContext.properties[field].anyOf).toEqual(expect.arrayContaining([{ type: 'string', const: '' }]));
  });

  describe('the auth hook', () => {
    const hook = (who: string | undefined, uidcid: string, path = 'api/v1/query') =>
      call(who, 'GET', `/metricsproxy/auth/${uidcid}/${path}`);

    it("answers a member and the owner the owner, cluster, tenant and the registration's client organization, also as headers", async () => {
      backends.metricsproxy.answer('metricsproxy', 'lookupBackend', async ({ projectId }) => ({
        found: projectId === '',
        clientOrgId: projectId === '' ? 'client-7' : '',
      }));
      for (const who of ['olivia', 'bob']) {
        const res = await hook(who, `${ACME.id}.${PROD}`);
        expect(res.body).toEqual({ owner: 'acme', clusterName: 'prod', tenantID: `${ACME.id}.${PROD}`, clientOrg: 'client-7' });
        expect(
          Object.fromEntries(
            ['x-scope-orgid', 'x-metrics-owner', 'x-metrics-cluster', 'x-metrics-client-org', 'cache-control'].map((h) => [
              h,
              res.headers.get(h),
            ]),
          ),
        ).toEqual({
          'x-scope-orgid': `${ACME.id}.${PROD}`,
          'x-metrics-owner': 'acme',
          'x-metrics-cluster': 'prod',
          'x-metrics-client-org': 'client-7',
          'cache-control': 'no-store',
        });
      }
      const unregistered = await hook('bob', `${ACME.id}.${EDGE}.proj-1`, 'api/v1/series');
      expect(unregistered.body).toEqual({ owner: 'acme', clusterName: 'edge', tenantID: `${ACME.id}.${EDGE}.proj-1` });
      expect(unregistered.headers.get('x-metrics-client-org')).toBeNull();
      expect(backends.metricsproxy.callsTo('metricsproxy', 'lookupBackend')).toContainEqual({
        ownerId: ACME.id,
        clusterUid: EDGE,
        projectId: 'proj-1',
      });
    });

    it('400 for a malformed uidcid; 401 without a token and to a site admin outside the organization', async () => {
      for (const bad of ['nodots', `x.${PROD}`, `-1.${PROD}`, `1.${PROD}.a.b`, `${ACME.id}..p`, `${ACME.id}.${PROD}.a%2Eb`])
        expect({ bad, status: (await hook('olivia', bad)).status }).toEqual({ bad, status: 400 });
      expect((await hook(undefined, `${ACME.id}.${PROD}`)).status).toBe(401);
      expect((await hook('root', `${ACME.id}.${PROD}`)).status).toBe(401);
    });

    it('behind a forward-auth reverse proxy: a member gets through with the tenant header, others get 401 and the backend never sees the query', async () => {
      const upstream = await startEchoUpstream();
      const proxy = await startForwardAuthProxy(gateway.base, upstream.url);
      try {
        await expectOnlyMembersThrough(proxy, upstream, `${ACME.id}.${PROD}`, { member: 'bob', stranger: 'mallory' });
      } finally {
        await proxy.stop();
        await upstream.stop();
      }
    });
  });
});
