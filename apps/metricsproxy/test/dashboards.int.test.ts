import { metricsproxyV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { metricsproxyApp } from '../src/app';
import { grafanaDouble, persesDouble } from './dashboard-doubles';

// Registrations on the two dashboard APIs (docs/metrics-proxy.md), against local doubles of them that follow their
// request and response shapes: what each double receives (credentials and TLS material in secureJsonData or the
// project secret only, the token as Bearer), updates in place, what unregister removes and keeps, a failing API
// answered 502 or 503 with what the call made taken back, an idempotent call retried, Go agents' zero values.

const CA = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUY2E=\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nMIIBY2VydA==\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIEa2V5LXNlY3JldA==\n-----END PRIVATE KEY-----\n';
const PASSWORD = 'prom-password-s3cret';
const BEARER = 'prom-bearer-t0ken';
const OWNER = 7;
const PROD = '0b7d4c1e-5f0a-4c5e-9d7b-2a1f6e3c9b10';
const NAME = `${OWNER}.${PROD}`;
const URL = 'https://prom.acme.example:9090';

const backend = metricsproxyV1.BackendConfig.fromPartial({
  url: URL,
  basicAuth: { username: 'reader', password: PASSWORD },
  tls: { ca: CA, cert: CERT, key: KEY, serverName: 'prom.acme.example', insecureSkipTlsVerify: false },
});
const context = (more: Partial<metricsproxyV1.BackendContext> = {}) =>
  metricsproxyV1.BackendContext.fromPartial({ ownerId: OWNER, ownerName: 'acme', clusterUid: PROD, ...more });
const SECRETS = new RegExp(`${PASSWORD}|${BEARER}|PRIVATE KEY`);

describe('metricsproxy on the dashboard APIs', () => {
  const a = grafanaDouble();
  const b = persesDouble();
  let app: AppUnderTest;
  let client: PromiseClient<typeof metricsproxyV1.MetricsproxyServiceService>;
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: { kind: string; message: string; httpStatus: number }) => e,
    );

  beforeAll(async () => {
    await a.double.start();
    await b.double.start();
    app = await startAppForTest(metricsproxyApp, {
      FLAVORA_URL: a.double.url,
      FLAVORA_TOKEN: 'sa-token-a',
      FLAVORB_URL: b.double.url,
      FLAVORB_TOKEN: 'token-b',
      FLAVOR_TIMEOUT_MS: '1000',
    });
    client = createClient(metricsproxyV1.MetricsproxyServiceService, app.address, { name: 'metricsproxy' });
  });
  afterAll(async () => {
    client?.close();
    await app?.stop();
    await a.double.stop();
    await b.double.stop();
  });
  afterEach(() => {
    a.double.failing = [];
    b.double.failing = [];
  });

  describe('flavor A (Grafana-compatible)', () => {
    it('creates the organization folder and a proxy-access Prometheus datasource, credentials and TLS in secureJsonData only', async () => {
      const mark = a.double.received.length;
      const res = await client.registerFlavorA({ context: context({ clientOrgId: 'client-7' }), backend });
      const folder = a.folders.get(`org-${OWNER}`)!;
      expect(folder).toMatchObject({ title: 'acme' });
      expect(res).toEqual({
        folderId: folder.id,
        folderUid: `org-${OWNER}`,
        datasource: NAME,
        datasourceUid: expect.any(String),
        url: URL,
      });
      const sent = a.double.since(mark);
      expect(sent.every((r) => r.token === 'sa-token-a')).toBe(true);
      const created = sent.find((r) => r.method === 'POST' && r.path === '/api/datasources')!.body;
      expect(created).toMatchObject({
        name: NAME,
        type: 'prometheus',
        access: 'proxy',
        url: URL,
        basicAuth: true,
        basicAuthUser: 'reader',
      });
      expect(created.secureJsonData).toEqual({ basicAuthPassword: PASSWORD, tlsCACert: CA, tlsClientCert: CERT, tlsClientKey: KEY });
      expect(created.jsonData).toMatchObject({ tlsAuth: true, tlsAuthWithCACert: true, serverName: 'prom.acme.example' });
      const { secureJsonData: _s, ...plain } = created;
      expect(JSON.stringify(plain)).not.toMatch(new RegExp(`${PASSWORD}|PRIVATE KEY|BEGIN CERTIFICATE`));
      expect(await client.lookupBackend({ ownerId: OWNER, clusterUid: PROD, projectId: '' })).toEqual({
        found: true,
        clientOrgId: 'client-7',
      });
    });

    it('registering the same cluster again updates the datasource in place (same folder, one datasource)', async () => {
      const mark = a.double.received.length;
      const res = await client.registerFlavorA({
        context: context({ isDefault: true }),
        backend: metricsproxyV1.BackendConfig.fromPartial({ url: 'https://prom2.acme.example', bearerToken: BEARER }),
      });
      expect(res.folderId).toBe(a.folders.get(`org-${OWNER}`)!.id);
      expect([...a.datasources.values()].filter((d) => d.name === NAME)).toHaveLength(1);
      const put = a.double.since(mark).find((r) => r.method === 'PUT')!;
      expect(put.path).toMatch(/^\/api\/datasources\/uid\/mp-[0-9a-f]{32}$/);
      expect(put.body).toMatchObject({
        url: 'https://prom2.acme.example',
        isDefault: true,
        basicAuth: false,
        jsonData: { httpHeaderName1: 'Authorization' },
      });
      expect(put.body.secureJsonData).toEqual({ httpHeaderValue1: `Bearer ${BEARER}` });
      expect(a.double.since(mark).some((r) => r.method === 'POST')).toBe(false);
    });

    it('names a project datasource <owner>.<cluster>.<projectId> and builds the URL of an in-cluster service', async () => {
      const res = await client.registerFlavorA({
        context: context({ hubUid: PROD, projectId: 'team-x' }),
        backend: metricsproxyV1.BackendConfig.fromPartial({
          service: { scheme: 'https', name: 'prometheus', namespace: 'monitoring', port: '9091', path: '/prom', query: '' },
        }),
      });
      expect(res).toMatchObject({ datasource: `${NAME}.team-x`, url: 'https://prometheus.monitoring.svc:9091/prom' });
    });

    it('unregister deletes the datasource and the folder once empty; again is NotFound', async () => {
      await client.unregisterFlavorA(context({ projectId: 'team-x' }));
      expect(a.folders.has(`org-${OWNER}`)).toBe(true); // the cluster's own datasource still uses it
      await client.unregisterFlavorA(context());
      expect([...a.datasources.values()].some((d) => d.name.startsWith(`${OWNER}.`))).toBe(false);
      expect(a.folders.has(`org-${OWNER}`)).toBe(false);
      expect(await client.lookupBackend({ ownerId: OWNER, clusterUid: PROD, projectId: '' })).toEqual({ found: false, clientOrgId: '' });
      expect(await failure(client.unregisterFlavorA(context()))).toMatchObject({ kind: 'not-found' });
    });

    it('keeps a folder that holds dashboards', async () => {
      await client.registerFlavorA({ context: context(), backend });
      a.dashboards.push({ folderUid: `org-${OWNER}`, title: 'Cluster overview' });
      await client.unregisterFlavorA(context());
      expect(a.folders.has(`org-${OWNER}`)).toBe(true);
      a.dashboards.length = 0;
    });

    it('a 5xx is 502 and a dropped connection 503, naming the flavor; the folder made on the way is taken back', async () => {
      a.double.failing = [{ match: /^POST \/api\/datasources$/, how: 500 }];
      const failed = await failure(client.registerFlavorA({ context: context(), backend }));
      expect(failed).toMatchObject({ kind: 'unavailable', httpStatus: 502, message: expect.stringMatching(/flavor A answered 500/) });
      expect(a.folders.has(`org-${OWNER}`)).toBe(true); // it existed before the call
      a.folders.delete(`org-${OWNER}`);
      a.double.failing = [{ match: /^POST \/api\/datasources$/, how: 'drop' }];
      const dropped = await failure(client.registerFlavorA({ context: context(), backend }));
      expect(dropped).toMatchObject({ kind: 'unavailable', httpStatus: 503, message: expect.stringMatching(/flavor A .* unreachable/) });
      expect(JSON.stringify([failed, dropped])).not.toMatch(SECRETS);
      expect(a.folders.has(`org-${OWNER}`)).toBe(false); // made by this call, then deleted
      expect(a.datasources.size).toBe(0);
    });

    it('retries an idempotent call that failed once', async () => {
      let failures = 1;
      a.double.failing = [{ match: { test: (s: string) => s.startsWith('GET /api/folders/') && failures-- > 0 } as RegExp, how: 500 }];
      expect(await client.registerFlavorA({ context: context(), backend })).toMatchObject({ datasource: NAME });
      await client.unregisterFlavorA(context());
    });

    it('sends no empty bearer header nor TLS material for a Go agent zero values', async () => {
      const mark = a.double.received.length;
      await client.registerFlavorA({
        context: context(),
        backend: metricsproxyV1.BackendConfig.fromPartial({ url: URL, basicAuth: { username: 'reader', password: PASSWORD } }),
      });
      const created = a.double.since(mark).find((r) => r.method === 'POST' && r.path === '/api/datasources')!.body;
      expect(created.secureJsonData).toEqual({ basicAuthPassword: PASSWORD });
      for (const field of ['httpHeaderName1', 'tlsAuth', 'tlsAuthWithCACert']) expect(created.jsonData).not.toHaveProperty(field);
      await client.unregisterFlavorA(context());
    });
  });

  describe('flavor B (Perses-compatible)', () => {
    it('creates the project, a secret with the credentials and a datasource referencing it', async () => {
      const mark = b.double.received.length;
      const res = await client.registerFlavorB({ context: context(), backend });
      expect(res).toEqual({ projectName: `org-${OWNER}`, folderName: 'acme', datasource: NAME, url: URL });
      expect(b.double.since(mark).every((r) => r.token === 'token-b')).toBe(true);
      expect(b.projects.get(`org-${OWNER}`)).toEqual({
        kind: 'Project',
        metadata: { name: `org-${OWNER}` },
        spec: { display: { name: 'acme' } },
      });
      expect(b.secrets.get(`org-${OWNER}/${NAME}-secret`).spec).toEqual({
        basicAuth: { username: 'reader', password: PASSWORD },
        tlsConfig: { ca: CA, cert: CERT, key: KEY, serverName: 'prom.acme.example', insecureSkipVerify: false },
      });
      const ds = b.datasources.get(`org-${OWNER}/${NAME}`);
      expect(ds.spec.plugin).toEqual({
        kind: 'PrometheusDatasource',
        spec: { proxy: { kind: 'HTTPProxy', spec: { url: URL, secret: `${NAME}-secret` } } },
      });
      expect(JSON.stringify(ds)).not.toMatch(SECRETS);
    });

    it('registering again replaces the secret and the datasource, one of each; a secret holds only what was set', async () => {
      await client.registerFlavorB({
        context: context(),
        backend: metricsproxyV1.BackendConfig.fromPartial({ url: URL, bearerToken: BEARER }),
      });
      expect(b.secrets.get(`org-${OWNER}/${NAME}-secret`).spec).toEqual({ authorization: { type: 'Bearer', credentials: BEARER } });
      expect([...b.datasources.keys()].filter((k) => k.startsWith(`org-${OWNER}/`))).toHaveLength(1);
    });

    it('unregister removes the datasource and its secret; again is NotFound', async () => {
      await client.unregisterFlavorB(context());
      expect(b.datasources.size).toBe(0);
      expect(b.secrets.size).toBe(0);
      expect(await failure(client.unregisterFlavorB(context()))).toMatchObject({
        kind: 'not-found',
        message: expect.stringMatching(/no flavor B metrics backend is registered/),
      });
    });

    it('a failed datasource takes back the secret and the project this call made', async () => {
      b.projects.delete(`org-${OWNER}`);
      b.double.failing = [{ match: /^POST \/api\/v1\/projects\/[^/]+\/datasources$/, how: 500 }];
      const failed = await failure(client.registerFlavorB({ context: context(), backend }));
      expect(failed).toMatchObject({ kind: 'unavailable', httpStatus: 502 });
      expect(JSON.stringify(failed)).not.toMatch(SECRETS);
      expect(b.secrets.size).toBe(0);
      expect(b.projects.has(`org-${OWNER}`)).toBe(false);
    });
  });
});
