import * as net from 'node:net';
import { gatewayV1 } from '@platform/proto';
import { eventually } from '@platform/testing';
import { loadConfig, serviceEnv } from './config';
import { bindService } from './service-binding';
import { createLogger } from './logger';
import { startService, versionOf, type RunningService } from './service';

/** An app whose HTTP server reads the whole body and answers with its length, under these settings. */
const start = (env: Record<string, string>) =>
  startService(
    {
      name: 'http-user',
      protoPackage: 'gateway',
      grpc: () => [bindService(gatewayV1.GatewayServiceService, { getVersion: async () => versionOf('http-user') })],
      http: {
        port: 0,
        handler: () => (req, res) => {
          let n = 0;
          req.on('data', (chunk: Buffer) => (n += chunk.length));
          req.on('end', () => res.end(String(n)));
        },
      },
    },
    loadConfig(serviceEnv, { GRPC_PORT: '0', LOG_LEVEL: 'silent', ...env }),
    createLogger('http-user', 'silent'),
  );

/** A raw connection: what the server sent, and whether it closed. */
function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d) => (received += d));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => received, closed };
}

describe('the HTTP server of an app', () => {
  let app: RunningService;
  afterEach(async () => app?.stop());

  it('cuts off a body sent a byte at a time with 408, while ordinary requests keep being answered', async () => {
    app = await start({ HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '1000' });
    const port = app.httpPort!;
    const slow = connect(port);
    slow.socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n');
    const drip = setInterval(() => slow.socket.writable && slow.socket.write('x'), 200);
    try {
      // Meanwhile an ordinary request is answered.
      const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'hello' });
      expect([res.status, await res.text()]).toEqual([200, '5']);
      await slow.closed;
      expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(drip);
      slow.socket.destroy();
    }
  }, 20_000);

  it('cuts off a client that never finishes its headers', async () => {
    app = await start({ HTTP_HEADERS_TIMEOUT_MS: '1000' });
    const slow = connect(app.httpPort!);
    slow.socket.write('GET / HTTP/1.1\r\nhost: x\r\n');
    await slow.closed;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);

  it('holds at most HTTP_MAX_CONNECTIONS connections and closes the next one at once', async () => {
    app = await start({ HTTP_MAX_CONNECTIONS: '2' });
    const port = app.httpPort!;
    const held = [connect(port), connect(port)];
    // Each held connection answered once: the server has taken both (and keeps them open).
    for (const { socket, received } of held) {
      socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      await eventually(async () => /^HTTP\/1\.1 200 .*\r\n\r\n0$/s.test(received()), 10_000, 5);
    }
    const third = connect(port);
    third.socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await third.closed;
    expect(third.received()).toBe('');
    // Once one is let go, a new connection is served again.
    held[0].socket.destroy();
    await held[0].closed;
    // The server lets go of it when it hears the close, a moment later: until then a new connection is still refused.
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/`)).status === 200, 10_000, 5);
    held[1].socket.destroy();
  }, 20_000);
});
