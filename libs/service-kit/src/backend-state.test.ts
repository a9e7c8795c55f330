import pino from 'pino';
import { UnavailableError } from '@platform/errors';
import { gatewayV1 } from '@platform/proto';
import { metricsText } from '@platform/telemetry';
import { LogLines } from '@platform/testing';
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

const unavailableCount = async (backend: string) => {
  const line = (await metricsText()).body.split('\n').find((l) => l.startsWith(`grpc_client_unavailable_total{backend="${backend}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
};

describe('a backend outage as its callers see it', () => {
  let server: RunningGrpcServer | undefined;
  afterEach(async () => server?.shutdown(100));

  it('is logged once when it starts and once when it ends, every failed call counted, and used again at once when back', async () => {
    // On fake time: the client's deadlines and reconnect backoff run on jest's clock (the sockets stay real), so how
    // soon it is back is measured in the client's own time, whatever the machine's speed.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    server = await serve();
    const port = server.port;
    const lines = new LogLines();
    const log = pino({ level: 'info' }, lines.stream);
    const client = createClient(gatewayV1.GatewayServiceService, `127.0.0.1:${port}`, {
      name: 'flaky-backend',
      inProcess: false,
      deadlineMs: 1_000,
      log,
    });
    try {
      await client.getVersion({});
      const stopping = server.shutdown(100);
      server = undefined;
      await jest.advanceTimersByTimeAsync(100);
      await stopping;
      // Down for three seconds, as a restarting pod is: 20 calls fail, one line says so.
      let unavailable = 0;
      for (let i = 0; i < 20; i++) {
        const err = await client.getVersion({}).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(UnavailableError);
        unavailable++;
        await jest.advanceTimersByTimeAsync(150);
      }
      expect(lines.entries.filter((l) => l.backend === 'flaky-backend').map((l) => l.msg)).toEqual([
        'flaky-backend is unavailable; calls to it fail with 503 until it answers again',
      ]);
      expect(await unavailableCount('flaky-backend')).toBe(unavailable);

      server = await serve(port);
      // Called every 20 ms of the client's time until it answers: within the half-second reconnect backoff (and its
      // jitter), not after a backoff of seconds.
      const answers = () =>
        client.getVersion({}).then(
          () => true,
          () => false,
        );
      let waited = 0;
      while (!(await answers()) && waited < 5_000) {
        await jest.advanceTimersByTimeAsync(20);
        waited += 20;
      }
      expect(waited).toBeLessThanOrEqual(600);
      const said = lines.entries.filter((l) => l.backend === 'flaky-backend').map((l) => l.msg);
      expect(said).toHaveLength(2);
      expect(said[1]).toBe('flaky-backend answers again');
    } finally {
      client.close();
      jest.useRealTimers();
    }
  }, 30_000);
});
