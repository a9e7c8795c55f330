import { Writable } from 'node:stream';
import pino from 'pino';
import { DeadlineError, UnavailableError } from '@platform/errors';
import { gatewayV1 } from '@platform/proto';
import { metricsText } from '@platform/telemetry';
import { createClient } from './grpc-client';
import { startGrpcServer, type RunningGrpcServer } from './grpc-server';
import { bindService } from './service-binding';
import { createLogger } from './logger';
import { versionOf } from './service';

const serve = (port = 0) =>
  startGrpcServer({
    name: 'flaky',
    port,
    host: '127.0.0.1',
    services: [bindService(gatewayV1.GatewayServiceService, { getVersion: async () => versionOf('flaky') })],
    protoFiles: ['platformadmin/gateway/v1/gateway.proto'],
    log: createLogger('flaky', 'silent'),
  });

/** The JSON lines a logger wrote. */
function capturingLogger() {
  const lines: { level: number; msg: string; backend?: string }[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

const unavailableCount = async (backend: string) => {
  const line = (await metricsText()).body.split('\n').find((l) => l.startsWith(`grpc_client_unavailable_total{backend="${backend}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
};

/** Calls until one answers (at most ten seconds): a deadline while connecting is no failure of the backend. */
async function eventuallyAnswers(call: () => Promise<unknown>) {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      return await call();
    } catch (e) {
      if (!(e instanceof DeadlineError) || Date.now() > until) throw e;
    }
  }
}

describe('a backend outage as its callers see it', () => {
  let server: RunningGrpcServer | undefined;
  afterEach(async () => server?.shutdown(100));

  it('is logged once when it starts and once when it ends, every failed call counted, and used again at once when back', async () => {
    server = await serve();
    const port = server.port;
    const { log, lines } = capturingLogger();
    const client = createClient(gatewayV1.GatewayServiceService, `127.0.0.1:${port}`, {
      name: 'flaky-backend',
      inProcess: false,
      deadlineMs: 1_000,
      log,
    });
    try {
      // The first call also opens the channel; on a loaded machine that alone can outrun the one-second deadline.
      await eventuallyAnswers(() => client.getVersion({}));
      await server.shutdown(100);
      server = undefined;
      // Down for a few seconds, as a restarting pod is: 20 calls fail, one line says so. (On a loaded machine a call
      // can also run out of its deadline while the channel reconnects: that is no answer either, and not counted.)
      let unavailable = 0;
      for (let i = 0; i < 20; i++) {
        const err = await client.getVersion({}).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err instanceof UnavailableError || err instanceof DeadlineError).toBe(true);
        if (err instanceof UnavailableError) unavailable++;
        await new Promise((r) => setTimeout(r, 150));
      }
      expect(unavailable).toBeGreaterThan(0);
      expect(lines.filter((l) => l.backend === 'flaky-backend').map((l) => l.msg)).toEqual([
        'flaky-backend is unavailable; calls to it fail with 503 until it answers again',
      ]);
      expect(await unavailableCount('flaky-backend')).toBe(unavailable);

      server = await serve(port);
      const back = Date.now();
      let answered = false;
      while (!answered && Date.now() - back < 5_000) {
        answered = await client.getVersion({}).then(
          () => true,
          () => new Promise((r) => setTimeout(() => r(false), 20)),
        );
      }
      // Reconnection follows the backend's readiness: within the half-second reconnect backoff (and some slack for a
      // loaded machine), not after a backoff of seconds.
      expect({ answered, soon: Date.now() - back < 1_500 }).toEqual({ answered: true, soon: true });
      const said = lines.filter((l) => l.backend === 'flaky-backend').map((l) => l.msg);
      expect(said).toHaveLength(2);
      expect(said[1]).toBe('flaky-backend answers again');
    } finally {
      client.close();
    }
  }, 30_000);
});
