import { bootTestPlatform, type TestPlatform } from './harness';
import { grafanaDouble, persesDouble } from './metrics-proxy-doubles';
import { startEchoUpstream, startForwardAuthProxy, startNginx, type ReverseProxy } from './metrics-proxy-reverse-proxies';

/**
 * The metrics proxy (docs/metrics-proxy.md) over HTTP, against local doubles of the two dashboard APIs
 * (flavor A Grafana-compatible, flavor B Perses-compatible): register and unregister on both, what the doubles
 * received (credentials in secureJsonData or a secret only), who may call, the inventory check, 422s, the
 * dashboards failing (502/503, nothing left behind), and the auth hook, alone and behind real reverse proxies.
 */

const CA = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUY2E=\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nMIIBY2VydA==\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIEa2V5LXNlY3JldA==\n-----END PRIVATE KEY-----\n';
const PASSWORD = 'prom-password-s3cret';
const BEARER = 'prom-bearer-t0ken';

describe('metrics proxy over HTTP', () => {
  let t: TestPlatform;
  const a = grafanaDouble();
  const b = persesDouble();
  const api: TestPlatform['api'] = (...args) => t.api(...args);
  let acme = 0;
  let prod = '';
  let spoke = '';
  let theirs = '';
  let devsTeam = 0;

  beforeAll(async () => {
    await a.double.start();
    await b.double.start();
    t = await bootTestPlatform({
      NATS_URL: '',
      FLAVORA_URL: a.double.url,
      FLAVORA_TOKEN: 'sa-token-a',
      FLAVORB_URL: b.double.url,
      FLAVORB_TOKEN: 'token-b',
      FLAVOR_TIMEOUT_MS: '1000',
    });
    for (const login of ['olivia', 'bob', 'mallory']) await t.signUp(login);
    expect((await api('olivia', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
    expect((await api('mallory', 'POST', '/orgs', { username: 'other' })).status).toBe(201);
    acme = (await api('olivia', 'GET', '/orgs/acme')).body.id;
    const devs = await api('olivia', 'POST', '/orgs/acme/teams', { name: 'devs', type: 'general', permission: 'read' });
    devsTeam = devs.body.id;
    expect((await api('olivia', 'PUT', `/teams/${devsTeam}/members/bob`)).status).toBe(204);
    prod = (await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'prod' })).body.cluster.uid;
    spoke = (await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'edge' })).body.cluster.uid;
    theirs = (await api('mallory', 'POST', '/orgs/other/clusters', { name: 'theirs' })).body.cluster.uid;
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await a.double.stop();
    await b.double.stop();
  });

  const register = (body: unknown, who = 'olivia', org = 'acme') => api(who, 'POST', `/metricsproxy/register?org=${org}`, body);
  const registerB = (body: unknown, who = 'olivia', org = 'acme') => api(who, 'POST', `/metricsproxy/flavorb/register?org=${org}`, body);
  const backend = {
    url: 'https://prom.acme.example:9090',
    basicAuth: { username: 'reader', password: PASSWORD },
    tls: { ca: CA, cert: CERT, key: KEY, serverName: 'prom.acme.example' },
  };

  describe('flavor A (Grafana-compatible)', () => {
    it('creates the organization folder and a proxy-access Prometheus datasource, credentials and TLS in secureJsonData only', async () => {
      const mark = a.double.received.length;
      const res = await register({ clusterUID: prod, backend, clientOrgID: 'client-7' });
      expect(res.status).toBe(200);
      const name = `${acme}.${prod}`;
      const folder = a.folders.get(`org-${acme}`)!;
      expect(folder).toMatchObject({ title: 'acme' });
      expect(res.body).toEqual({
        flavora: {
          url: backend.url,
          basicAuth: { username: 'reader' },
          tls: { ca: CA, cert: CERT, serverName: 'prom.acme.example', insecureSkipTLSVerify: false },
          dashboard: { datasource: name, folderID: folder.id },
        },
        folderID: folder.id,
        datasource: name,
      });
      const sent = a.double.since(mark);
      expect(sent.every((r) => r.token === 'sa-token-a')).toBe(true);
      const created = sent.find((r) => r.method === 'POST' && r.path === '/api/datasources')!.body;
      expect(created).toMatchObject({
        name,
        type: 'prometheus',
        access: 'proxy',
        url: backend.url,
        basicAuth: true,
        basicAuthUser: 'reader',
      });
      expect(created.secureJsonData).toEqual({ basicAuthPassword: PASSWORD, tlsCACert: CA, tlsClientCert: CERT, tlsClientKey: KEY });
      expect(created.jsonData).toMatchObject({ tlsAuth: true, tlsAuthWithCACert: true, serverName: 'prom.acme.example' });
      // Nothing secret anywhere but secureJsonData.
      const { secureJsonData: _s, ...plain } = created;
      expect(JSON.stringify(plain)).not.toMatch(new RegExp(`${PASSWORD}|PRIVATE KEY|BEGIN CERTIFICATE`));
      expect(JSON.stringify(res.body)).not.toMatch(new RegExp(`${PASSWORD}|PRIVATE KEY`));
    });

    it('registering the same cluster again updates the datasource in place (same folder, one datasource)', async () => {
      const mark = a.double.received.length;
      const res = await register({ clusterUID: prod, backend: { url: 'https://prom2.acme.example', bearerToken: BEARER }, default: true });
      expect(res.status).toBe(200);
      expect(res.body.folderID).toBe(a.folders.get(`org-${acme}`)!.id);
      expect([...a.datasources.values()].filter((d) => d.name === `${acme}.${prod}`)).toHaveLength(1);
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
      const res = await register({
        hubUID: prod,
        clusterUID: prod,
        projectId: 'team-x',
        backend: { service: { scheme: 'https', name: 'prometheus', namespace: 'monitoring', port: '9091', path: '/prom' } },
      });
      expect(res.status).toBe(200);
      expect(res.body.datasource).toBe(`${acme}.${prod}.team-x`);
      expect(res.body.flavora.url).toBe('https://prometheus.monitoring.svc:9091/prom');
    });

    it('unregister deletes the datasource, the folder once empty, and answers 200 with no body; again is 404', async () => {
      expect((await api('olivia', 'POST', '/metricsproxy/unregister?org=acme', { clusterUID: prod, projectId: 'team-x' })).status).toBe(
        200,
      );
      expect(a.folders.has(`org-${acme}`)).toBe(true); // the cluster's own datasource still uses it
      const res = await api('olivia', 'POST', '/metricsproxy/unregister?org=acme', { clusterUID: prod });
      expect(res).toEqual({ status: 200, body: undefined });
      expect([...a.datasources.values()].some((d) => d.name.startsWith(`${acme}.`))).toBe(false);
      expect(a.folders.has(`org-${acme}`)).toBe(false);
      expect((await api('olivia', 'POST', '/metricsproxy/unregister?org=acme', { clusterUID: prod })).status).toBe(404);
    });

    it('keeps a folder that holds dashboards', async () => {
      expect((await register({ clusterUID: prod, backend })).status).toBe(200);
      a.dashboards.push({ folderUid: `org-${acme}`, title: 'Cluster overview' });
      expect((await api('olivia', 'POST', '/metricsproxy/unregister?org=acme', { clusterUID: prod })).status).toBe(200);
      expect(a.folders.has(`org-${acme}`)).toBe(true);
      a.dashboards.length = 0;
    });
  });

  describe('flavor B (Perses-compatible)', () => {
    it('creates the project, a secret with the credentials and a datasource referencing it', async () => {
      const mark = b.double.received.length;
      const res = await registerB({ clusterUID: prod, backend });
      expect(res.status).toBe(200);
      const name = `${acme}.${prod}`;
      expect(res.body).toMatchObject({
        projectName: `org-${acme}`,
        folderName: 'acme',
        datasource: name,
        flavorb: { url: backend.url, dashboard: { projectName: `org-${acme}`, folderName: 'acme', datasource: name } },
      });
      expect(b.double.since(mark).every((r) => r.token === 'token-b')).toBe(true);
      expect(b.projects.get(`org-${acme}`)).toEqual({
        kind: 'Project',
        metadata: { name: `org-${acme}` },
        spec: { display: { name: 'acme' } },
      });
      const secret = b.secrets.get(`org-${acme}/${name}-secret`);
      expect(secret.spec).toEqual({
        basicAuth: { username: 'reader', password: PASSWORD },
        tlsConfig: { ca: CA, cert: CERT, key: KEY, serverName: 'prom.acme.example', insecureSkipVerify: false },
      });
      const ds = b.datasources.get(`org-${acme}/${name}`);
      expect(ds.spec.plugin).toEqual({
        kind: 'PrometheusDatasource',
        spec: { proxy: { kind: 'HTTPProxy', spec: { url: backend.url, secret: `${name}-secret` } } },
      });
      expect(JSON.stringify(ds)).not.toMatch(new RegExp(`${PASSWORD}|PRIVATE KEY`));
    });

    it('registering again replaces the secret and the datasource, one of each', async () => {
      const res = await registerB({ clusterUID: prod, backend: { url: 'http://prom3:9090', bearerToken: BEARER } });
      expect(res.status).toBe(200);
      expect(b.secrets.get(`org-${acme}/${acme}.${prod}-secret`).spec).toEqual({ authorization: { type: 'Bearer', credentials: BEARER } });
      expect([...b.datasources.keys()].filter((k) => k.startsWith(`org-${acme}/`))).toHaveLength(1);
    });

    it('unregister removes the datasource and its secret; 200 with no body', async () => {
      const res = await api('olivia', 'POST', '/metricsproxy/flavorb/unregister?org=acme', { clusterUID: prod });
      expect(res).toEqual({ status: 200, body: undefined });
      expect(b.datasources.size).toBe(0);
      expect(b.secrets.size).toBe(0);
      expect((await api('olivia', 'POST', '/metricsproxy/flavorb/unregister?org=acme', { clusterUID: prod })).status).toBe(404);
    });
  });

  describe('who may call, and what is refused', () => {
    const routes = [
      '/metricsproxy/register',
      '/metricsproxy/flavorb/register',
      '/metricsproxy/unregister',
      '/metricsproxy/flavorb/unregister',
    ];

    it('401 without a token, 403 for a member who is not an admin and for a stranger, 400 without org', async () => {
      for (const path of routes) {
        expect((await api(undefined, 'POST', `${path}?org=acme`, { clusterUID: prod, backend })).status).toBe(401);
        expect((await api('bob', 'POST', `${path}?org=acme`, { clusterUID: prod, backend })).status).toBe(403);
        expect((await api('mallory', 'POST', `${path}?org=acme`, { clusterUID: prod, backend })).status).toBe(403);
        expect((await api('olivia', 'POST', path, { clusterUID: prod, backend })).status).toBe(400);
      }
    });

    it("refuses another organization's cluster or an unknown one (403), creating nothing on either dashboard", async () => {
      const marks = [a.double.received.length, b.double.received.length];
      for (const clusterUID of [theirs, '00000000-0000-4000-8000-000000000000']) {
        const res = await register({ clusterUID, backend });
        expect(res.status).toBe(403);
        expect(res.body.message).toMatch(/is not a cluster of organization acme/);
        expect((await registerB({ clusterUID, backend })).status).toBe(403);
      }
      expect((await register({ clusterUID: prod, hubUID: theirs, backend })).status).toBe(403);
      // Unregister refuses another owner's cluster too; a cluster gone from the inventory is this org's to clean up.
      expect((await api('olivia', 'POST', '/metricsproxy/unregister?org=acme', { clusterUID: theirs })).status).toBe(403);
      const gone = await api('olivia', 'POST', '/metricsproxy/flavorb/unregister?org=acme', {
        clusterUID: '00000000-0000-4000-8000-000000000000',
      });
      expect(gone.status).toBe(404);
      expect(gone.body.message).toMatch(/no flavor B metrics backend is registered/);
      expect((await register({ clusterUID: prod, hubUID: spoke, backend })).status).toBe(422); // not that hub's cluster
      expect((await register({ clusterUID: theirs, backend }, 'mallory', 'other')).status).toBe(200);
      expect(a.double.received.length).toBeGreaterThan(marks[0]); // mallory's own cluster went through
      expect((await api('mallory', 'POST', '/metricsproxy/unregister?org=other', { clusterUID: theirs })).status).toBe(200);
      expect(b.double.received.length).toBe(marks[1]);
    });

    it('422 for a body without backend or with a malformed one, naming the field', async () => {
      const mark = a.double.received.length;
      const bad: [unknown, string][] = [
        [{ clusterUID: prod }, 'backend'],
        [{ backend }, 'clusterUID'],
        [{ clusterUID: 'not-a-uuid', backend }, 'clusterUID'],
        [{ clusterUID: prod, backend: {} }, 'backend.url'],
        [{ clusterUID: prod, backend: { url: 'ftp://prom' } }, 'backend.url'],
        [{ clusterUID: prod, backend: { url: 'not a url' } }, 'backend.url'],
        [{ clusterUID: prod, backend: { service: { name: 'prom', namespace: 'mon', port: '99999' } } }, 'backend.service.port'],
        [{ clusterUID: prod, backend: { service: { name: 'prom', namespace: 'mon', port: 'http' } } }, 'backend.service.port'],
        [{ clusterUID: prod, backend: { url: backend.url, tls: { ca: 'not pem' } } }, 'backend.tls.ca'],
        [{ clusterUID: prod, backend: { url: backend.url, tls: { cert: CERT } } }, 'backend.tls.key'],
        [
          { clusterUID: prod, backend: { url: backend.url, basicAuth: { username: 'x', password: 'y' }, bearerToken: 'z' } },
          'backend.bearerToken',
        ],
        [{ clusterUID: prod, projectId: 'a.b', backend }, 'projectId'],
      ];
      for (const [body, field] of bad) {
        for (const res of [await register(body), await registerB(body)]) {
          expect(res.status).toBe(422);
          expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(`body.${field}`);
        }
      }
      expect(a.double.received.length).toBe(mark);
    });
  });

  describe('when a dashboard API fails', () => {
    afterEach(() => {
      a.double.failing = [];
      b.double.failing = [];
    });

    it('a 5xx is 502 and a dropped connection 503, naming the flavor; the folder made on the way is taken back', async () => {
      a.double.failing = [{ match: /^POST \/api\/datasources$/, how: 500 }];
      const res = await register({ clusterUID: prod, backend });
      expect(res.status).toBe(502);
      expect(res.body.message).toMatch(/flavor A answered 500/);
      expect(a.folders.has(`org-${acme}`)).toBe(true); // it existed before (it holds a dashboard's folder from above)
      a.folders.delete(`org-${acme}`);
      a.double.failing = [{ match: /^POST \/api\/datasources$/, how: 'drop' }];
      const dropped = await register({ clusterUID: prod, backend });
      expect(dropped.status).toBe(503);
      expect(dropped.body.message).toMatch(/flavor A .* unreachable/);
      expect(a.folders.has(`org-${acme}`)).toBe(false); // made by this call, then deleted
      expect(a.datasources.size).toBe(0);
    });

    it('flavor B: a failed datasource takes back the secret and the project this call made', async () => {
      b.projects.delete(`org-${acme}`); // so this call makes the project
      b.double.failing = [{ match: /^POST \/api\/v1\/projects\/[^/]+\/datasources$/, how: 500 }];
      const res = await registerB({ clusterUID: prod, backend });
      expect(res.status).toBe(502);
      expect(b.secrets.size).toBe(0);
      expect(b.projects.has(`org-${acme}`)).toBe(false);
      expect(JSON.stringify(res.body)).not.toContain(PASSWORD);
    });

    it('retries an idempotent call that failed once', async () => {
      let failures = 1;
      a.double.failing = [{ match: { test: (s: string) => s.startsWith('GET /api/folders/') && failures-- > 0 } as RegExp, how: 500 }];
      expect((await register({ clusterUID: prod, backend })).status).toBe(200);
      expect((await api('olivia', 'POST', '/metricsproxy/unregister?org=acme', { clusterUID: prod })).status).toBe(200);
    });
  });

  describe('bodies from Go agents: zero values for the fields they leave unset', () => {
    const ZERO_SERVICE = { scheme: '', name: '', namespace: '', port: '', path: '', query: '' };
    const ZERO_TLS = { ca: '', cert: '', key: '', serverName: '', insecureSkipTLSVerify: false };
    /** Every field of the Go structs, as encoding/json writes them without omitempty. */
    const goContext = () => ({ hubUID: '', clusterUID: prod, projectId: '', default: false, issueToken: false, clientOrgID: '' });
    const URL = 'https://prom.acme.example:9090';
    const goBody = () => ({
      ...goContext(),
      backend: {
        url: URL,
        // Both given: the URL is used (docs/metrics-proxy.md).
        service: { scheme: 'http', name: 'prometheus', namespace: 'monitoring', port: '9090', path: '', query: '' },
        basicAuth: { username: 'reader', password: PASSWORD },
        bearerToken: '',
        tls: ZERO_TLS,
      },
    });

    it('flavor A: registers with "" for unset strings, a zero TLS struct and both url and service (the url wins); unregisters', async () => {
      const mark = a.double.received.length;
      const res = await register(goBody());
      expect(res.status).toBe(200);
      const name = `${acme}.${prod}`;
      // The connection answered is the one used: the URL, no service, no TLS settings.
      expect(res.body.flavora).toEqual({
        url: URL,
        basicAuth: { username: 'reader' },
        dashboard: { datasource: name, folderID: expect.any(Number) },
      });
      const created = a.double.since(mark).find((r) => r.method === 'POST' && r.path === '/api/datasources')!.body;
      expect(created).toMatchObject({ name, url: URL, basicAuth: true, basicAuthUser: 'reader' });
      // No empty bearer token header, no empty TLS material.
      expect(created.secureJsonData).toEqual({ basicAuthPassword: PASSWORD });
      expect(created.jsonData).not.toHaveProperty('httpHeaderName1');
      expect(created.jsonData).not.toHaveProperty('tlsAuth');
      expect(created.jsonData).not.toHaveProperty('tlsAuthWithCACert');

      // A service alone, with the other connection fields zero.
      const service = await register({
        ...goContext(),
        backend: {
          url: '',
          service: { ...ZERO_SERVICE, name: 'prometheus', namespace: 'monitoring', port: '9090' },
          basicAuth: { username: '', password: '' },
          bearerToken: '',
          tls: ZERO_TLS,
        },
      });
      expect(service.status).toBe(200);
      expect(service.body.flavora).toMatchObject({
        url: 'http://prometheus.monitoring.svc:9090',
        service: { name: 'prometheus', namespace: 'monitoring', port: '9090' },
      });
      expect(service.body.flavora).not.toHaveProperty('basicAuth');

      expect(await api('olivia', 'POST', '/metricsproxy/unregister?org=acme', goContext())).toEqual({ status: 200, body: undefined });
      expect([...a.datasources.values()].some((d) => d.name === name)).toBe(false);
    });

    it('flavor B: the secret holds only what was set; unregisters with the zero-valued context', async () => {
      const res = await registerB(goBody());
      expect(res.status).toBe(200);
      const name = `${acme}.${prod}`;
      expect(res.body.flavorb).toMatchObject({ url: URL });
      expect(res.body.flavorb).not.toHaveProperty('service');
      expect(res.body.flavorb).not.toHaveProperty('tls');
      expect(b.secrets.get(`org-${acme}/${name}-secret`).spec).toEqual({ basicAuth: { username: 'reader', password: PASSWORD } });
      expect(b.datasources.get(`org-${acme}/${name}`).spec.plugin.spec.proxy.spec.url).toBe(URL);
      expect(await api('olivia', 'POST', '/metricsproxy/flavorb/unregister?org=acme', goContext())).toEqual({
        status: 200,
        body: undefined,
      });
      expect(b.datasources.size).toBe(0);
    });

    it('null for a nil pointer is absent too; what is set and wrong is still 422 naming the field', async () => {
      const nulls = await register({
        clusterUID: prod,
        hubUID: null,
        projectId: null,
        clientOrgID: null,
        backend: { url: URL, service: null, basicAuth: null, bearerToken: null, tls: null },
      });
      expect(nulls.status).toBe(200);
      expect((await api('olivia', 'POST', '/metricsproxy/unregister?org=acme', goContext())).status).toBe(200);
      const mark = a.double.received.length;
      const bad: [unknown, string][] = [
        [{ ...goContext(), backend: { ...goBody().backend, url: '', service: ZERO_SERVICE } }, 'backend.url'],
        [
          { ...goContext(), backend: { ...goBody().backend, service: { ...ZERO_SERVICE, name: 'prometheus', port: '9090' }, url: '' } },
          'backend.service.namespace',
        ],
        [
          { ...goContext(), backend: { ...goBody().backend, basicAuth: { username: 'reader', password: '' } } },
          'backend.basicAuth.password',
        ],
        [{ ...goContext(), backend: { ...goBody().backend, tls: { ...ZERO_TLS, ca: 'not pem' } } }, 'backend.tls.ca'],
        [{ ...goContext(), clusterUID: '', backend: goBody().backend }, 'clusterUID'],
      ];
      for (const [body, field] of bad) {
        for (const res of [await register(body), await registerB(body)]) {
          expect({ field, status: res.status }).toEqual({ field, status: 422 });
          expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(`body.${field}`);
        }
      }
      expect(a.double.received.length).toBe(mark);
    });

    it('the API document says an empty string or null is accepted for the optional fields', async () => {
      const doc = (await api(undefined, 'GET', '/openapi.json')).body;
      const config = doc.components.schemas.BackendConfig;
      for (const field of ['url', 'bearerToken'])
        expect(config.properties[field].anyOf).toEqual(expect.arrayContaining([{ type: 'string', const: '' }, { type: 'null' }]));
      for (const field of ['service', 'basicAuth', 'tls'])
        expect(config.properties[field].anyOf).toEqual(expect.arrayContaining([{ type: 'null' }]));
      expect(config.description).toMatch(/with both url and service, url is used/);
      const context = doc.components.schemas.MetricsBackendContext;
      for (const field of ['hubUID', 'clusterUID', 'projectId', 'clientOrgID'])
        expect(context.properties[field].anyOf).toEqual(expect.arrayContaining([{ type: 'string', const: '' }]));
    });
  });

  describe('the auth hook', () => {
    const hook = (who: string | undefined, uidcid: string, path = 'api/v1/query') =>
      api(who, 'GET', `/metricsproxy/auth/${uidcid}/${path}`);

    it('200 {owner, clusterName, tenantID, clientOrg} with X-Scope-OrgID for members and owners of the owning organization', async () => {
      expect((await register({ clusterUID: prod, backend, clientOrgID: 'client-7' })).status).toBe(200);
      for (const who of ['olivia', 'bob']) {
        const res = await hook(who, `${acme}.${prod}`);
        expect(res).toEqual({
          status: 200,
          body: { owner: 'acme', clusterName: 'prod', tenantID: `${acme}.${prod}`, clientOrg: 'client-7' },
        });
        expect(res.headers.get('x-scope-orgid')).toBe(`${acme}.${prod}`);
        expect(res.headers.get('x-metrics-cluster')).toBe('prod');
      }
      const unregistered = await hook('bob', `${acme}.${spoke}.proj-1`, 'api/v1/series');
      expect(unregistered.body).toEqual({ owner: 'acme', clusterName: 'edge', tenantID: `${acme}.${spoke}.proj-1` });
    });

    it("a registration's new client organization, and its removal, show on the very next request", async () => {
      const context = { clusterUID: spoke, projectId: 'hook-x' };
      const clientOrg = async () => {
        const res = await hook('bob', `${acme}.${spoke}.hook-x`);
        expect(res.status).toBe(200);
        expect(res.headers.get('x-metrics-client-org') ?? undefined).toBe(res.body.clientOrg);
        return res.body.clientOrg;
      };
      expect((await register({ ...context, backend, clientOrgID: 'client-a' })).status).toBe(200);
      expect(await clientOrg()).toBe('client-a');
      expect(await clientOrg()).toBe('client-a');
      expect((await register({ ...context, backend, clientOrgID: 'client-b' })).status).toBe(200);
      expect(await clientOrg()).toBe('client-b');
      expect((await api('olivia', 'POST', '/metricsproxy/unregister?org=acme', context)).status).toBe(200);
      expect(await clientOrg()).toBeUndefined();
    });

    it('401 without a token and for a caller outside the organization (a site admin too)', async () => {
      expect((await hook(undefined, `${acme}.${prod}`)).status).toBe(401);
      expect((await hook('mallory', `${acme}.${prod}`)).status).toBe(401);
      expect((await hook('root', `${acme}.${prod}`)).status).toBe(401);
      // The same refusal for an existing cluster of another tenant and for unknown ones: it names no owner or cluster.
      const refusal = await hook('mallory', `${acme}.${prod}`);
      expect(JSON.stringify(refusal.body)).not.toMatch(/acme|prod/);
      for (const unknown of [`${acme}.00000000-0000-4000-8000-000000000000`, `999999.${prod}`])
        expect((await hook('mallory', unknown)).body).toEqual(refusal.body);
    });

    it('400 for a malformed uidcid; to a member, 404 for an unknown cluster or a cluster of another owner; to anyone else, 401', async () => {
      for (const bad of ['nodots', `x.${prod}`, `-1.${prod}`, `1.${prod}.a.b`, `${acme}..p`])
        expect((await hook('olivia', bad)).status).toBe(400);
      expect((await hook('olivia', `999999.${prod}`)).status).toBe(401);
      expect((await hook('olivia', `${acme}.00000000-0000-4000-8000-000000000000`)).status).toBe(404);
      expect((await hook('olivia', `${acme}.${theirs}`)).status).toBe(404);
    });
  });

  describe('behind a real reverse proxy', () => {
    let upstream: Awaited<ReturnType<typeof startEchoUpstream>>;
    const proxies: ReverseProxy[] = [];
    beforeAll(async () => {
      upstream = await startEchoUpstream();
      const gateway = t.platform.url.replace(/\/$/, '');
      proxies.push(await startForwardAuthProxy(gateway, upstream.url));
      const nginx = await startNginx(gateway, upstream.url);
      if (nginx) proxies.push(nginx);
      else console.warn('nginx is not installed (apt-get install nginx-light): the nginx auth_request case is skipped');
    });
    afterAll(async () => {
      for (const p of proxies) await p.stop();
      await upstream?.stop();
    });

    it('a member gets through with the tenant header, a non-member gets 401 and the backend never sees the query', async () => {
      for (const proxy of proxies) {
        const query = `${proxy.url}/metrics/${acme}.${prod}/api/v1/query?query=up`;
        const member = await fetch(query, { headers: { authorization: `token ${t.tokens.bob}` } });
        expect({ proxy: proxy.name, status: member.status }).toEqual({ proxy: proxy.name, status: 200 });
        expect(await member.json()).toEqual({ path: '/api/v1/query?query=up', tenant: `${acme}.${prod}` });
        const hits = upstream.hits();
        const stranger = await fetch(query, { headers: { authorization: `token ${t.tokens.mallory}` } });
        expect({ proxy: proxy.name, status: stranger.status }).toEqual({ proxy: proxy.name, status: 401 });
        expect((await fetch(query)).status).toBe(401);
        expect(upstream.hits()).toBe(hits);
      }
    });
  });

  it('a member removed from the organization is refused by the hook on the very next request, and let in again on the next after re-adding', async () => {
    const hook = () => api('bob', 'GET', `/metricsproxy/auth/${acme}.${prod}/api/v1/query`);
    expect((await hook()).status).toBe(200);
    expect((await hook()).status).toBe(200);
    expect((await api('olivia', 'DELETE', `/teams/${devsTeam}/members/bob`)).status).toBe(204);
    expect((await hook()).status).toBe(401);
    expect((await api('olivia', 'PUT', `/teams/${devsTeam}/members/bob`)).status).toBe(204);
    expect((await hook()).status).toBe(200);
  });
});
