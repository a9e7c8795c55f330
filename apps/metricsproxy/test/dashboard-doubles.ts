import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a double received: method, path with query, its bearer token, parsed JSON body. */
export interface Received {
  method: string;
  path: string;
  token: string;
  body: any;
}

/**
 * A local stand-in of a dashboard HTTP API: routes by method and path regex over in-memory state, records every
 * request, and answers 500 (or drops the connection) for paths told to fail.
 */
export class DashboardDouble {
  readonly received: Received[] = [];
  /** Requests whose `METHOD path` matches fail: 500, or the socket is closed ('drop'). */
  failing: { match: RegExp; how: 500 | 'drop' }[] = [];
  private server?: http.Server;
  url = '';

  constructor(private readonly routes: [string, RegExp, (m: RegExpExecArray, body: any) => [number, unknown?]][]) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const body = raw ? JSON.parse(raw) : undefined;
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
        this.received.push({ method: req.method!, path, token, body });
        const fail = this.failing.find((f) => f.match.test(`${req.method} ${path}`));
        if (fail?.how === 'drop') return void req.socket.destroy();
        if (fail) return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"boom"}');
        for (const [method, re, fn] of this.routes) {
          const m = method === req.method ? re.exec(path) : null;
          if (!m) continue;
          const [status, answer] = fn(m, body);
          res.writeHead(status, { 'content-type': 'application/json' });
          return void res.end(answer === undefined ? '' : JSON.stringify(answer));
        }
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not found"}');
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise((r) => this.server?.close(r));
  }

  /** The requests after the n-th, and a mark to start from next time. */
  since(mark: number): Received[] {
    return this.received.slice(mark);
  }
}

/**
 * Flavor A: the Grafana HTTP API's folders (`GET /api/folders/:uid`, `POST /api/folders`, `DELETE`), datasources
 * by uid (`GET|PUT|DELETE /api/datasources/uid/:uid`, `POST /api/datasources` answering `{datasource, id,
 * message, name}`, 409 for a taken name) and `GET /api/search?folderUIDs=` for dashboards in a folder.
 */
export function grafanaDouble() {
  const folders = new Map<string, { id: number; uid: string; title: string }>();
  const datasources = new Map<string, any>();
  const dashboards: { folderUid: string; title: string }[] = [];
  let nextId = 1;
  const double = new DashboardDouble([
    ['GET', /^\/api\/folders\/([^/?]+)$/, (m) => (folders.has(m[1]) ? [200, folders.get(m[1])] : [404, { message: 'folder not found' }])],
    [
      'POST',
      /^\/api\/folders$/,
      (_m, b) => {
        if (folders.has(b.uid)) return [409, { message: 'a folder with the same uid already exists' }];
        const f = { id: nextId++, uid: b.uid, title: b.title };
        folders.set(b.uid, f);
        return [200, { ...f, url: `/dashboards/f/${b.uid}`, version: 1 }];
      },
    ],
    [
      'DELETE',
      /^\/api\/folders\/([^/?]+)$/,
      (m) => (folders.delete(m[1]) ? [200, { message: 'Folder deleted' }] : [404, { message: 'folder not found' }]),
    ],
    [
      'GET',
      /^\/api\/search\?folderUIDs=([^&]+)/,
      (m) => [200, dashboards.filter((d) => d.folderUid === decodeURIComponent(m[1])).map((d) => ({ type: 'dash-db', title: d.title }))],
    ],
    [
      'GET',
      /^\/api\/datasources\/uid\/([^/?]+)$/,
      (m) => (datasources.has(m[1]) ? [200, strip(datasources.get(m[1]))] : [404, { message: 'Data source not found' }]),
    ],
    [
      'POST',
      /^\/api\/datasources$/,
      (_m, b) => {
        if ([...datasources.values()].some((d) => d.name === b.name))
          return [409, { message: 'data source with the same name already exists' }];
        const ds = { ...b, id: nextId++, version: 1 };
        datasources.set(b.uid, ds);
        return [200, { datasource: strip(ds), id: ds.id, message: 'Datasource added', name: ds.name }];
      },
    ],
    [
      'PUT',
      /^\/api\/datasources\/uid\/([^/?]+)$/,
      (m, b) => {
        const old = datasources.get(m[1]);
        if (!old) return [404, { message: 'Data source not found' }];
        const ds = { ...b, id: old.id, version: old.version + 1, secureJsonData: { ...old.secureJsonData, ...b.secureJsonData } };
        datasources.set(m[1], ds);
        return [200, { datasource: strip(ds), id: ds.id, message: 'Datasource updated', name: ds.name }];
      },
    ],
    [
      'DELETE',
      /^\/api\/datasources\/uid\/([^/?]+)$/,
      (m) => (datasources.delete(m[1]) ? [200, { message: 'Data source deleted' }] : [404, { message: 'Data source not found' }]),
    ],
  ]);
  return { double, folders, datasources, dashboards };
}

/** What the Grafana API answers of a datasource: secureJsonData never, only which fields are set. */
function strip(ds: any) {
  const { secureJsonData, ...rest } = ds;
  return { ...rest, secureJsonFields: Object.fromEntries(Object.keys(secureJsonData ?? {}).map((k) => [k, true])) };
}

/**
 * Flavor B: the Perses API v1: projects (`GET|DELETE /api/v1/projects/:name`, `POST /api/v1/projects`), and per
 * project secrets and datasources (`POST /api/v1/projects/:p/<kind>`, `GET|PUT|DELETE .../<kind>/:name`), 409 for
 * a name taken. Secrets are answered without their values, as Perses does.
 */
export function persesDouble() {
  const projects = new Map<string, any>();
  const objects = { secrets: new Map<string, any>(), datasources: new Map<string, any>() };
  const key = (p: string, n: string) => `${p}/${n}`;
  const noProject = [404, { message: 'project not found' }] as [number, unknown];
  const double = new DashboardDouble([
    [
      'GET',
      /^\/api\/v1\/projects\/([^/?]+)$/,
      (m) => (projects.has(m[1]) ? [200, projects.get(m[1])] : [404, { message: 'document not found' }]),
    ],
    [
      'POST',
      /^\/api\/v1\/projects$/,
      (_m, b) => {
        if (projects.has(b.metadata.name)) return [409, { message: 'document already exists' }];
        projects.set(b.metadata.name, b);
        return [200, b];
      },
    ],
    ['DELETE', /^\/api\/v1\/projects\/([^/?]+)$/, (m) => (projects.delete(m[1]) ? [204] : [404, { message: 'document not found' }])],
    ...(['secrets', 'datasources'] as const).flatMap((kind) => {
      const store = objects[kind];
      const shown = (o: any) => (kind === 'secrets' ? { kind: o.kind, metadata: o.metadata, spec: {} } : o);
      return [
        [
          'POST',
          new RegExp(`^/api/v1/projects/([^/?]+)/${kind}$`),
          (m: RegExpExecArray, b: any) => {
            if (!projects.has(m[1])) return noProject;
            if (store.has(key(m[1], b.metadata.name))) return [409, { message: 'document already exists' }];
            store.set(key(m[1], b.metadata.name), b);
            return [200, shown(b)];
          },
        ],
        [
          'GET',
          new RegExp(`^/api/v1/projects/([^/?]+)/${kind}/([^/?]+)$`),
          (m: RegExpExecArray) =>
            store.has(key(m[1], m[2])) ? [200, shown(store.get(key(m[1], m[2])))] : [404, { message: 'document not found' }],
        ],
        [
          'PUT',
          new RegExp(`^/api/v1/projects/([^/?]+)/${kind}/([^/?]+)$`),
          (m: RegExpExecArray, b: any) => {
            if (!store.has(key(m[1], m[2]))) return [404, { message: 'document not found' }];
            store.set(key(m[1], m[2]), b);
            return [200, shown(b)];
          },
        ],
        [
          'DELETE',
          new RegExp(`^/api/v1/projects/([^/?]+)/${kind}/([^/?]+)$`),
          (m: RegExpExecArray) => (store.delete(key(m[1], m[2])) ? [204] : [404, { message: 'document not found' }]),
        ],
      ] as [string, RegExp, (m: RegExpExecArray, body: any) => [number, unknown?]][];
    }),
  ]);
  return { double, projects, secrets: objects.secrets, datasources: objects.datasources };
}
