import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, eventually } from '@platform/testing';
import { interrupt, killLaunched, npmStart } from './launcher';

/**
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, one API call leaves spans of the gateway, the
 * backend it calls and the database, linked in one trace (W3C traceparent over HTTP and gRPC), and the log
 * lines written while serving it carry its trace id. The receiver is a small HTTP server taking OTLP/JSON
 * at /v1/traces, as a collector would.
 */

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  scope: string;
  service: string;
  attributes: Record<string, string | number | boolean>;
}

/** An OTLP/HTTP JSON receiver keeping every span it is sent. */
async function startReceiver(): Promise<{ url: string; spans: Span[]; close(): Promise<void> }> {
  const spans: Span[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const value = (v: any) => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
        for (const rs of JSON.parse(body).resourceSpans ?? []) {
          const service = value(rs.resource.attributes.find((a: any) => a.key === 'service.name').value);
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                kind: s.kind,
                scope: ss.scope.name,
                service,
                attributes: Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, value(a.value)])),
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const SERVER = 2;
const CLIENT = 3;

/** The chain of parents from `span` up to the root of its trace. */
function ancestors(spans: Span[], span: Span): Span[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const out: Span[] = [];
  for (let s = byId.get(span.parentSpanId ?? ''); s; s = byId.get(s.parentSpanId ?? '')) out.push(s);
  return out;
}

describe('traces over OTLP (npm start with OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  afterAll(() => killLaunched());

  it('links the gateway, the backend it calls over gRPC and its Postgres queries in one trace, and logs the trace id', async () => {
    const receiver = await startReceiver();
    const db = await createTestDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-traces-'));
    const launcher = await npmStart({
      DATA_DIR: dataDir,
      DATABASE_URL: db.url,
      // Through the network, as separate processes call each other: traceparent travels in gRPC metadata.
      GRPC_IN_PROCESS: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      PLATFORM_ADMIN_PASSWORD: 'traces-admin-password',
    });
    try {
      const res = await fetch(`${launcher.url}api/v1/users/admin/tokens`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from('admin:traces-admin-password').toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'traced' }),
      });
      expect(res.status).toBe(201);
      const requestId = res.headers.get('x-request-id')!;

      // The gateway's server span of the call, then everything of its trace.
      const isCall = (s: Span) => s.kind === SERVER && s.attributes['http.route'] === '/api/v1/users/:username/tokens';
      await eventually(async () => receiver.spans.some(isCall), 10_000, 100);
      const root = receiver.spans.find(isCall)!;
      const trace = () => receiver.spans.filter((s) => s.traceId === root.traceId);
      // A query orgs-teams made serving the call (the gateway's own sign-in-failure count is a query too, made
      // before it asks orgs-teams).
      const pgQuery = (s: Span) =>
        s.scope === '@opentelemetry/instrumentation-pg' && ancestors(trace(), s).some((a) => a.attributes['platform.app'] === 'orgs-teams');
      await eventually(async () => trace().some(pgQuery), 10_000, 100);
      const spans = trace();

      expect(root).toMatchObject({ service: 'platform', scope: '@opentelemetry/instrumentation-http', parentSpanId: undefined });
      // The gateway's gRPC client span and orgs-teams' server span of the same call, linked through traceparent.
      const client = spans.find((s) => s.kind === CLIENT && s.scope === '@opentelemetry/instrumentation-grpc');
      const server = spans.find(
        (s) =>
          s.kind === SERVER &&
          s.scope === '@opentelemetry/instrumentation-grpc' &&
          String(s.attributes['rpc.service']).startsWith('platformadmin.orgsteams.'),
      );
      expect(client).toBeDefined();
      expect(server).toBeDefined();
      expect(server!.parentSpanId).toBe(client!.spanId);
      expect(ancestors(spans, client!)).toContainEqual(root);
      // The span naming the app that served it, and the database queries it made, under it.
      const served = spans.find((s) => s.attributes['platform.app'] === 'orgs-teams');
      expect(served).toBeDefined();
      expect(ancestors(spans, served!)).toContainEqual(server);
      const query = spans.find(pgQuery)!;
      expect(query.attributes['db.system'] ?? query.attributes['db.system.name']).toBe('postgresql');
      expect(ancestors(spans, query)).toContainEqual(served);

      // The gateway's access-log line of that request carries the trace id.
      const accessLine = launcher
        .logs()
        .split('\n')
        .find((l) => l.includes(requestId) && l.includes('"msg":"request"'));
      expect(JSON.parse(accessLine!)).toMatchObject({ trace_id: root.traceId, route: '/users/:username/tokens' });
    } finally {
      await interrupt(launcher.child);
      await receiver.close();
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
