import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import * as zlib from 'node:zlib';
import pino from 'pino';
import { z } from 'zod';
import { InputError } from '@platform/errors';
import { loadConfig } from '@platform/service-kit';
import { eventually } from '@platform/testing';
import type { Backends } from '../src/backends';
import { gatewayEnv } from '../src/config';
import { createGatewayHttp } from '../src/http';
import { JsonStream, sectionRoutes } from '../src/route';

/**
 * A body a backend streams (the usage views, JsonStream) through the gateway's HTTP edge: written piece by piece,
 * far past gRPC's message limit, compressed when asked; a refusal before the first piece is still the response's
 * status; a failure after it cuts the response off (never a complete-looking wrong body); a client that goes
 * away stops the backend's stream; with VALIDATE_RESPONSES a body off its schema is cut off too.
 */
describe('a streamed JSON body at the edge', () => {
  const PIECES = 400; // 400 rows of ~100 KB: ~40 MB
  /**
   * What the ~40 MB tests may take: a few seconds on a quiet machine, several times that beside busy neighbours. The
   * suite's 30 s would make them fail for the machine's load, not for anything the gateway did.
   */
  const HEAVY_MS = 180_000;
  const ROW = 'x'.repeat(100_000);
  /** How the next stream behaves. */
  let fail: 'before' | 'middle' | 'never' | 'offSchema' = 'never';
  let stopped = false;
  let made = 0;
  /** Rows in the next stream: ~40 MB unless a test needs less. */
  let pieces = PIECES;
  async function* rows() {
    stopped = false;
    made = 0;
    try {
      if (fail === 'before') throw new InputError('unknown view nope');
      yield { json: Buffer.from('{"rows":[') };
      for (let i = 0; i < pieces; i++) {
        if (fail === 'middle' && i === 10) throw new Error('the database went away');
        made++;
        yield { json: Buffer.from(`${i ? ',' : ''}{"i":${i},"pad":"${ROW}"}`) };
      }
      // Off its schema: `rows2` missing.
      yield { json: Buffer.from(fail === 'offSchema' ? ']}' : '],"rows2":1}') };
    } finally {
      stopped = true;
    }
  }
  const route = sectionRoutes({ tag: 'Miscellaneous', backend: 'billing-dashboard' });
  const schema = z.object({ rows: z.array(z.object({ i: z.number(), pad: z.string() })), rows2: z.number() });
  const row = (path: string) =>
    route({
      method: 'get',
      scope: 'read:misc',
      path,
      summary: 'A streamed test body',
      auth: 'public',
      response: { status: 200, schema },
      async handle() {
        return { body: await JsonStream.of(rows()) };
      },
    });
  const warnings: string[] = [];
  let servers: http.Server[] = [];

  async function gateway(validate: boolean): Promise<string> {
    const config = loadConfig(gatewayEnv, { LOG_LEVEL: 'silent', VALIDATE_RESPONSES: String(validate) });
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) {
          const entry = JSON.parse(line) as { level: number; msg: string };
          if (entry.level === 40) warnings.push(entry.msg);
        }
        done();
      },
    });
    const app = createGatewayHttp({ routes: [row('/streamed')], backends: { orgsTeams: {}, authz: {} } as unknown as Backends, config, log: pino({ level: 'warn' }, sink) });
    const server = http.createServer(app);
    // As the apps' servers keep idle connections (HTTP_KEEP_ALIVE_TIMEOUT_MS): Node's 5 s default could close the
    // connection fetch reuses for the next request while a busy machine is still between the two.
    server.keepAliveTimeout = 65_000;
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/streamed`;
  }
  let url: string;
  beforeAll(async () => {
    url = await gateway(false);
  });
  afterAll(() => {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    servers = [];
  });

  it('writes a body of ~40 MB whole, in pieces, and compressed when the client asks, leaving no listener behind', async () => {
    fail = 'never';
    // Waiting for room once a piece must not add listeners for good (Node warns past ten on one emitter).
    const leaks: string[] = [];
    const onWarning = (w: Error) => w.name === 'MaxListenersExceededWarning' && leaks.push(w.message);
    process.on('warning', onWarning);
    const res = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
    expect([res.status, res.headers.get('content-type'), res.headers.get('content-length')]).toEqual([
      200,
      'application/json; charset=utf-8',
      null,
    ]);
    const body = (await res.json()) as { rows: { i: number }[] };
    expect(body.rows.map((r) => r.i)).toEqual([...Array(PIECES).keys()]);
    // Compression takes the response's drain listeners onto its own stream: count them there.
    const drainListeners = new Map<zlib.Gzip, number>();
    const streamOn = zlib.Gzip.prototype.on;
    const on = jest.spyOn(zlib.Gzip.prototype, 'on').mockImplementation(function (this: zlib.Gzip, event, listener) {
      if (event === 'drain') drainListeners.set(this, (drainListeners.get(this) ?? 0) + 1);
      return streamOn.call(this, event, listener);
    });
    const gz = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(((await gz.json()) as { rows: unknown[] }).rows).toHaveLength(PIECES);
    on.mockRestore();
    expect([...drainListeners.values()]).toEqual([1]);
    await new Promise((r) => setImmediate(r));
    process.off('warning', onWarning);
    expect(leaks).toEqual([]);
  }, HEAVY_MS);

  it("answers a refusal before the first piece with the refusal's status", async () => {
    fail = 'before';
    const res = await fetch(url);
    expect([res.status, ((await res.json()) as { message: string }).message]).toEqual([400, 'unknown view nope']);
  });

  it('cuts the response off when the stream fails after its first piece, and says so in the log', async () => {
    fail = 'middle';
    const res = await fetch(url);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect(warnings).toContain('a streamed response was cut off');
  });

  it("stops the backend's stream when the client goes away", async () => {
    fail = 'never';
    const controller = new AbortController();
    const res = await fetch(url, { signal: controller.signal, headers: { 'accept-encoding': 'identity' } });
    await res.body!.getReader().read();
    controller.abort();
    await eventually(async () => stopped, 5_000);
    expect(made).toBeLessThan(PIECES);
  });

  // Checking the schema does not depend on the size (the ~40 MB is the first test's): 20 rows, ~2 MB.
  it('with VALIDATE_RESPONSES, writes a streamed body that matches its schema and cuts off one that does not', async () => {
    const validating = await gateway(true);
    fail = 'never';
    pieces = 20;
    const good = await fetch(validating);
    expect(((await good.json()) as { rows: unknown[] }).rows).toHaveLength(20);
    fail = 'before';
    expect((await fetch(validating)).status).toBe(400);
    fail = 'offSchema';
    const bad = await fetch(validating);
    expect(bad.status).toBe(200);
    await expect(bad.text()).rejects.toThrow();
    pieces = PIECES;
  }, HEAVY_MS);
});
