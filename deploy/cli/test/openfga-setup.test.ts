// `setup-openfga` against a small stand-in for OpenFGA's HTTP API (stores and authorization models, as the
// official SDK calls them) and for the Kubernetes API (one namespace's ConfigMaps): what the chart's hook Job
// does before install and every upgrade.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TypeSystem } from '@platform/app-authz';
import { runCli } from '../src/cli';
import { setupOpenFga, type KubernetesAccess } from '../src/openfga-setup-command';

interface Store {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
  models: { id: string; schema_version: string; type_definitions: unknown; conditions?: unknown }[];
}

/** OpenFGA's store and model endpoints, in memory; `token` set: every call must carry it. */
class FakeOpenFga {
  readonly stores: Store[] = [];
  readonly calls: string[] = [];
  token?: string;
  private next = 0;
  private server = http.createServer((req, res) => void this.handle(req, res));

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** A ULID-shaped id, in creation order. */
  id(): string {
    return `01J${String(++this.next).padStart(23, '0')}`;
  }

  addStore(name: string, createdAt: string): Store {
    const store = { id: this.id(), name, created_at: createdAt, updated_at: createdAt, models: [] };
    this.stores.push(store);
    return store;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += chunk;
    const url = new URL(req.url!, 'http://x');
    this.calls.push(`${req.method} ${url.pathname}`);
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    if (this.token && req.headers.authorization !== `Bearer ${this.token}`)
      return send(401, { code: 'unauthenticated', message: 'unauthenticated' });
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] !== 'stores') return send(404, { code: 'undefined_endpoint', message: 'no such path' });
    if (parts.length === 1 && req.method === 'GET') {
      // Pages of one store, to make the client follow continuation tokens; no name filter (an older server).
      const from = Number(url.searchParams.get('continuation_token') || 0);
      const page = this.stores.slice(from, from + 1).map(({ models: _, ...s }) => s);
      return send(200, { stores: page, continuation_token: from + 1 < this.stores.length ? String(from + 1) : '' });
    }
    if (parts.length === 1 && req.method === 'POST') {
      const store = this.addStore(JSON.parse(body).name, new Date().toISOString());
      const { models: _, ...created } = store;
      return send(201, created);
    }
    const store = this.stores.find((s) => s.id === parts[1]);
    if (!store) return send(404, { code: 'store_id_not_found', message: 'store not found' });
    if (parts.length === 2 && req.method === 'GET') {
      const { models: _, ...found } = store;
      return send(200, found);
    }
    if (parts[2] === 'authorization-models' && req.method === 'GET') {
      return send(200, { authorization_models: [...store.models].reverse().slice(0, 1), continuation_token: '' });
    }
    if (parts[2] === 'authorization-models' && req.method === 'POST') {
      const model = { id: this.id(), ...JSON.parse(body) };
      store.models.push(model);
      return send(201, { authorization_model_id: model.id });
    }
    send(404, { code: 'undefined_endpoint', message: 'no such path' });
  }
}

/** One namespace's ConfigMaps behind the Kubernetes API's create and merge-patch. */
class FakeKubernetes {
  readonly configMaps = new Map<string, { metadata: { name: string; labels?: Record<string, string> }; data: Record<string, string> }>();
  private server = http.createServer((req, res) => void this.handle(req, res));

  async start(): Promise<KubernetesAccess> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return { baseUrl: `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`, token: 'sa-token', namespace: 'platform' };
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += chunk;
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    if (req.headers.authorization !== 'Bearer sa-token') return send(401, { message: 'Unauthorized' });
    const match = /^\/api\/v1\/namespaces\/platform\/configmaps(?:\/([^/]+))?$/.exec(req.url!);
    if (!match) return send(404, { message: 'not found' });
    const name = match[1];
    if (req.method === 'POST' && !name) {
      const cm = JSON.parse(body);
      if (this.configMaps.has(cm.metadata.name)) return send(409, { message: 'already exists' });
      this.configMaps.set(cm.metadata.name, cm);
      return send(201, cm);
    }
    if (req.method === 'PATCH' && name) {
      expect(req.headers['content-type']).toBe('application/merge-patch+json');
      const cm = this.configMaps.get(name);
      if (!cm) return send(404, { message: `configmaps "${name}" not found` });
      Object.assign(cm.data, JSON.parse(body).data);
      return send(200, cm);
    }
    send(405, { message: 'method not allowed' });
  }
}

const capture = (env: Record<string, string>) => {
  const io = { env, out: '', err: '' };
  return {
    io: { env, out: (s: string) => void (io.out += s), err: (s: string) => void (io.err += s), readStdin: async () => '' },
    printed: io,
  };
};

describe('setup-openfga', () => {
  const fga = new FakeOpenFga();
  const kube = new FakeKubernetes();
  let apiUrl: string;
  let access: KubernetesAccess;
  const platformModel = TypeSystem.fromFile().model;

  beforeAll(async () => {
    apiUrl = await fga.start();
    access = await kube.start();
  });
  afterAll(async () => {
    await fga.stop();
    await kube.stop();
  });
  beforeEach(() => {
    fga.stores.length = 0;
    fga.calls.length = 0;
    fga.token = undefined;
    kube.configMaps.clear();
  });

  const run = async (opts: { storeName?: string; configmap?: string }, env: Record<string, string> = {}) => {
    const { io, printed } = capture({ OPENFGA_API_URL: apiUrl, ...env });
    const code = await setupOpenFga(opts, io, () => access).catch((err: { exitCode?: number; message: string }) => {
      printed.err += err.message;
      return err.exitCode ?? -1;
    });
    return { code, ...printed };
  };

  it('creates the store and writes the model on the first run, records the id, and changes nothing on the next', async () => {
    fga.addStore('another', '2026-01-01T00:00:00Z');
    const first = await run({ storeName: 'platform/platform', configmap: 'platform-openfga' });
    expect(first.code).toBe(0);
    const store = fga.stores.find((s) => s.name === 'platform/platform')!;
    expect(first.out).toBe(`${store.id}\n`);
    expect(store.models).toHaveLength(1);
    expect(store.models[0]).toMatchObject({
      schema_version: platformModel.schema_version,
      type_definitions: platformModel.type_definitions,
    });
    expect(kube.configMaps.get('platform-openfga')!.data).toEqual({ OPENFGA_STORE_ID: store.id });

    // An upgrade: the same store, found by name across pages; the model is the same, so nothing is written.
    fga.calls.length = 0;
    const again = await run({ storeName: 'platform/platform', configmap: 'platform-openfga' });
    expect(again.code).toBe(0);
    expect(again.out).toBe(`${store.id}\n`);
    expect(fga.stores.filter((s) => s.name === 'platform/platform')).toHaveLength(1);
    expect(store.models).toHaveLength(1);
    expect(fga.calls.filter((c) => c.startsWith('POST'))).toEqual([]);
    expect(again.err).toMatch(/is the platform's: nothing to write/);
    expect(kube.configMaps.get('platform-openfga')!.data).toEqual({ OPENFGA_STORE_ID: store.id });
  });

  it('writes the model again when the store’s latest is another one (OpenFGA keeps the old versions)', async () => {
    const store = fga.addStore('platform/platform', '2026-01-01T00:00:00Z');
    store.models.push({ id: fga.id(), schema_version: '1.1', type_definitions: [{ type: 'user' }] });
    const res = await run({ storeName: 'platform/platform' });
    expect(res.code).toBe(0);
    expect(store.models).toHaveLength(2);
    expect(store.models[1].type_definitions).toEqual(platformModel.type_definitions);
    expect(res.err).toContain(`(the latest was ${store.models[0].id})`);
  });

  it('picks the oldest of several stores with the name, every time', async () => {
    const newer = fga.addStore('platform/platform', '2026-03-01T00:00:00Z');
    const older = fga.addStore('platform/platform', '2026-02-01T00:00:00Z');
    const res = await run({ storeName: 'platform/platform', configmap: 'platform-openfga' });
    expect(res.out).toBe(`${older.id}\n`);
    expect(res.err).toContain(`2 stores are named "platform/platform" (${older.id}, ${newer.id}); using the oldest`);
    expect(kube.configMaps.get('platform-openfga')!.data.OPENFGA_STORE_ID).toBe(older.id);
  });

  it('merges the id into a ConfigMap that is there already', async () => {
    kube.configMaps.set('platform-openfga', { metadata: { name: 'platform-openfga' }, data: { OPENFGA_STORE_ID: 'stale', OTHER: 'kept' } });
    const res = await run({ storeName: 'platform/platform', configmap: 'platform-openfga' });
    expect(res.code).toBe(0);
    expect(kube.configMaps.get('platform-openfga')!.data).toEqual({ OPENFGA_STORE_ID: res.out.trim(), OTHER: 'kept' });
  });

  it('uses OPENFGA_STORE_ID when set, and fails with 1 when no such store exists', async () => {
    const store = fga.addStore('mine', '2026-01-01T00:00:00Z');
    const given = await run({ storeName: 'ignored' }, { OPENFGA_STORE_ID: store.id });
    expect(given.code).toBe(0);
    expect(given.out).toBe(`${store.id}\n`);
    expect(fga.stores).toHaveLength(1);
    expect(store.models).toHaveLength(1);

    const missing = await run({}, { OPENFGA_STORE_ID: '01JZZZZZZZZZZZZZZZZZZZZZZZ' });
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/no such store/);
  });

  it('sends OPENFGA_API_TOKEN, and names it when OpenFGA refuses the credentials (69)', async () => {
    fga.token = 'pre-shared';
    expect((await run({ storeName: 'platform/platform' }, { OPENFGA_API_TOKEN: 'pre-shared' })).code).toBe(0);
    const refused = await run({ storeName: 'platform/platform' }, { OPENFGA_API_TOKEN: 'wrong' });
    expect(refused.code).toBe(69);
    expect(refused.err).toMatch(/credentials were refused \(OPENFGA_API_TOKEN\), HTTP 401/);
    expect(refused.err).not.toContain('wrong');
  });

  it('through the command line: needs OPENFGA_API_URL (78) and a store (64); outside a pod --configmap is refused before OpenFGA is touched', async () => {
    const cli = async (argv: string[], env: Record<string, string>) => {
      let err = '';
      const code = await runCli(argv, { env, out: () => undefined, err: (s) => void (err += s), readStdin: async () => '' });
      return { code, err };
    };
    expect(await cli(['setup-openfga', '--store-name', 'x'], {})).toEqual({
      code: 78,
      err: 'platform-cli: OPENFGA_API_URL is not set: name the OpenFGA server to set up\n',
    });
    expect((await cli(['setup-openfga'], { OPENFGA_API_URL: apiUrl })).code).toBe(64);
    const outside = await cli(['setup-openfga', '--store-name', 'x', '--configmap', 'cm'], { OPENFGA_API_URL: apiUrl });
    expect(outside.code).toBe(78);
    expect(outside.err).toMatch(/KUBERNETES_SERVICE_HOST is not set/);
    expect(fga.calls).toEqual([]);
  });

  it('says which OpenFGA cannot be reached (69)', async () => {
    const { io, printed } = capture({ OPENFGA_API_URL: 'http://127.0.0.1:1' });
    const err = await setupOpenFga({ storeName: 'x' }, io).catch((e) => e);
    expect(err.exitCode).toBe(69);
    expect(err.message).toMatch(/^OpenFGA at http:\/\/127\.0\.0\.1:1 \(OPENFGA_API_URL\): listing the stores failed/);
    expect(printed.out).toBe('');
  }, 30_000);
});
