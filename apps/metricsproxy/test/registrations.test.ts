import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainError, UnavailableError } from '@platform/errors';
import type { BackendsStore } from '../src/backends-store';
import type { MetricsproxyConfig } from '../src/config';
import { DashboardApi } from '../src/dashboard-http';
import { Registrations } from '../src/registrations';

const ctx = {
  ownerId: 7,
  ownerName: 'acme',
  hubUid: '',
  clusterUid: 'c1',
  projectId: '',
  clientOrgId: '',
  isDefault: false,
  issueToken: false,
};
const backend = { url: 'http://prom:9090', bearerToken: 'very-secret-token', basicAuth: undefined, service: undefined, tls: undefined };

function logger() {
  const warnings: unknown[][] = [];
  return { warnings, log: { warn: (...a: unknown[]) => warnings.push(a), error: () => {}, info: () => {} } as any };
}

describe('metricsproxy registrations', () => {
  it('a flavor without its URL or token is "not configured": 503 naming the missing settings, and a warning at start', async () => {
    const { warnings, log } = logger();
    const config = {
      FLAVORA_URL: 'http://grafana',
      FLAVORA_TOKEN: undefined,
      FLAVORB_URL: undefined,
      FLAVORB_TOKEN: undefined,
      FLAVOR_TIMEOUT_MS: 1000,
    };
    const r = new Registrations({} as BackendsStore, config as unknown as MetricsproxyConfig, log);
    const a = await r.registerA(ctx, backend).catch((e: unknown) => e);
    expect(a).toBeInstanceOf(UnavailableError);
    expect((a as Error).message).toBe('metrics proxy flavor A is not configured: FLAVORA_TOKEN not set');
    await expect(r.unregisterB(ctx)).rejects.toThrow('metrics proxy flavor B is not configured: FLAVORB_URL and FLAVORB_TOKEN not set');
    r.warnUnconfigured();
    expect(warnings.map((w) => w[1])).toEqual([
      'metricsproxy: flavor A is not configured (FLAVORA_TOKEN unset); its register routes answer 503',
      'metricsproxy: flavor B is not configured (FLAVORB_URL, FLAVORB_TOKEN unset); its register routes answer 503',
    ]);
  });
});

describe('a register whose last step fails', () => {
  it('deletes the folder and the datasource it made when the database write fails, and answers that failure', async () => {
    const calls: string[] = [];
    const server = http.createServer((req, res) => {
      calls.push(`${req.method} ${req.url}`);
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'GET') return json(404, { message: 'not found' });
      if (req.url === '/api/folders') return json(200, { id: 3, uid: 'org-7', title: 'acme' });
      if (req.url === '/api/datasources') return json(200, { datasource: { id: 9 }, id: 9, message: 'Datasource added', name: '7.c1' });
      return json(200, { message: 'deleted' });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { log } = logger();
      const store = { put: () => Promise.reject(new Error('database down')) } as unknown as BackendsStore;
      const config = { FLAVORA_URL: url, FLAVORA_TOKEN: 't', FLAVORB_URL: undefined, FLAVORB_TOKEN: undefined, FLAVOR_TIMEOUT_MS: 1000 };
      const r = new Registrations(store, config as unknown as MetricsproxyConfig, log);
      await expect(r.registerA(ctx, backend)).rejects.toThrow('database down');
      expect(calls).toEqual([
        'GET /api/folders/org-7',
        'POST /api/folders',
        expect.stringMatching(/^GET \/api\/datasources\/uid\/mp-[0-9a-f]{32}$/),
        'POST /api/datasources',
        // undone newest first
        expect.stringMatching(/^DELETE \/api\/datasources\/uid\/mp-[0-9a-f]{32}$/),
        'DELETE /api/folders/org-7',
      ]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('DashboardApi', () => {
  let server: http.Server;
  let url = '';
  const seen: { method: string; auth: string }[] = [];
  let answers: number[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ method: req.method!, auth: req.headers.authorization ?? '' });
      const status = answers.shift() ?? 200;
      // Too slow: answered well after the client gave up (a bound wide enough that a busy machine never trips it by accident).
      if (status === 0) return void setTimeout(() => res.end('{}'), 3_000).unref();
      res.writeHead(status, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));
  beforeEach(() => {
    seen.length = 0;
  });
  const api = () =>
    new DashboardApi({
      name: 'flavor A',
      url,
      token: 'sa-token',
      timeoutMs: 1_000,
      retry: { attempts: 3, baseDelayMs: 10, factor: 1, jitter: 'none' },
    });

  it('retries idempotent calls on 5xx and timeouts, sends the token as a bearer', async () => {
    answers = [502, 0, 200];
    expect(await api().call('GET', '/api/folders/x')).toEqual({ status: 200, body: { ok: true } });
    expect(seen).toEqual([1, 2, 3].map(() => ({ method: 'GET', auth: 'Bearer sa-token' })));
  });

  it('sends a POST once; a 5xx is 502 and a timeout 503, neither message carrying the token or the body', async () => {
    answers = [500];
    const e5 = (await api()
      .call('POST', '/api/datasources', { secret: 'pw' })
      .catch((e: unknown) => e)) as DomainError;
    expect([e5.httpStatus, e5.message]).toEqual([502, 'flavor A answered 500 to POST /api/datasources']);
    expect(seen).toHaveLength(1);
    answers = [0];
    const slow = (await api()
      .call('POST', '/api/datasources', { secret: 'pw' })
      .catch((e: unknown) => e)) as DomainError;
    expect(slow.httpStatus).toBe(503);
    expect(slow.message).toMatch(/^flavor A \(127\.0\.0\.1:\d+\) gave no answer within 1000 ms/);
    expect(`${e5.message}${slow.message}`).not.toMatch(/sa-token|pw/);
  });

  it('answers 4xx to the caller, who decides', async () => {
    answers = [404];
    expect((await api().call('GET', '/api/folders/none')).status).toBe(404);
    expect(seen).toHaveLength(1);
  });
});
