import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { createLogger, loadConfig } from '@platform/service-kit';
import { closeBackends, connectBackends } from '../src/backends';
import { gatewayEnv } from '../src/config';
import { createGatewayHttp } from '../src/http';
import { sectionRoutes } from '../src/route';

// What a browser downloads is compressed when it says it accepts it: the console's scripts, the API document and the
// API's JSON answers; content packed already (a PDF, unknown bytes) is sent as it is, and a client that does not
// accept gzip gets the plain bytes.

const SCRIPT = `console.log(${JSON.stringify('the console '.repeat(500))});`;
const ROWS = Array.from({ length: 200 }, (_, i) => ({ id: i, name: `cluster-${i}`, status: 'Ready' }));
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(4096, 7)]);

const route = sectionRoutes({ tag: 'Miscellaneous', backend: 'orgs-teams' });
const rows = [
  route({
    method: 'get',
    path: '/compression-probe/list',
    summary: 'a long JSON list',
    auth: 'public',
    scope: 'read:misc',
    response: { status: 200, schema: z.array(z.object({ id: z.number(), name: z.string(), status: z.string() })) },
    handle: async () => ({ body: ROWS }),
  }),
  route({
    method: 'get',
    path: '/compression-probe/summary.pdf',
    summary: 'a PDF',
    auth: 'public',
    scope: 'read:misc',
    response: { status: 200, schema: z.instanceof(Buffer), contentType: 'application/pdf' },
    handle: async () => ({ body: PDF, headers: { 'Content-Type': 'application/pdf' } }),
  }),
  route({
    method: 'get',
    path: '/compression-probe/object',
    summary: 'stored bytes of no known type',
    auth: 'public',
    scope: 'read:misc',
    response: { status: 200, schema: z.instanceof(Buffer), contentType: '*/*' },
    handle: async () => ({ body: PDF, headers: { 'Content-Type': 'application/octet-stream' } }),
  }),
];

/** Asks with node:http, which (unlike fetch) neither adds Accept-Encoding nor decodes, so the raw answer is seen. */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describe('compressed answers', () => {
  let dir: string;
  let base: string;
  let close: () => void;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><script type="module" src="/assets/index-AbC123.js"></script>');
    fs.writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), SCRIPT);
    const config = loadConfig(gatewayEnv, { LOG_LEVEL: 'silent', CONSOLE_DIR: dir });
    const { backends } = connectBackends(config);
    const server = http.createServer(createGatewayHttp({ routes: rows, backends, config, log: createLogger('gateway-test', 'silent') }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => {
      server.closeAllConnections();
      server.close();
      closeBackends(backends);
    };
  });
  afterAll(() => {
    close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['the console script', '/assets/index-AbC123.js'],
    ['the API document', '/api/v1/openapi.json'],
    ['a JSON answer', '/api/v1/compression-probe/list'],
  ])('sends %s gzipped to a client accepting gzip, and plain to one that does not', async (_what, p) => {
    const zipped = await get(`${base}${p}`, { 'accept-encoding': 'gzip, deflate' });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/Accept-Encoding/i);
    const plainAnswer = await get(`${base}${p}`);
    expect(plainAnswer.headers['content-encoding']).toBeUndefined();
    expect(zipped.body.length).toBeLessThan(plainAnswer.body.length / 2);
    // What the browser decodes is exactly what was served uncompressed.
    const decoded = await (await fetch(`${base}${p}`)).arrayBuffer();
    expect(Buffer.from(decoded).equals(plainAnswer.body)).toBe(true);
    expect(Number(plainAnswer.headers['content-length'])).toBe(plainAnswer.body.length);
  });

  it('prefers brotli when the client prefers it', async () => {
    const res = await get(`${base}/assets/index-AbC123.js`, { 'accept-encoding': 'br' });
    expect(res.headers['content-encoding']).toBe('br');
  });

  it('sends a PDF and unknown bytes as they are', async () => {
    for (const p of ['/api/v1/compression-probe/summary.pdf', '/api/v1/compression-probe/object']) {
      const res = await get(`${base}${p}`, { 'accept-encoding': 'gzip, br' });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.body.equals(PDF)).toBe(true);
    }
  });

  it("keeps a script's ETag, so a compressed asset revalidates with 304", async () => {
    const first = await get(`${base}/assets/index-AbC123.js`, { 'accept-encoding': 'gzip' });
    expect(first.headers.etag).toBeTruthy();
    const again = await get(`${base}/assets/index-AbC123.js`, { 'accept-encoding': 'gzip', 'if-none-match': first.headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });
});
