import { spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { credentials, loadPackageDefinition, type Client } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { connect } from 'nats';
import { BusTimeoutError } from '@platform/bus';
import { outboxMigration, type Outbox } from '@platform/db';
import { UnavailableError } from '@platform/errors';
import { gatewayV1 } from '@platform/proto';
import { createTestDatabase, eventually, freePort, startPrivateNats, type PrivateNats } from '@platform/testing';
import { loadConfig, serviceEnv } from './config';
import { EXIT_DEPENDENCY_UNAVAILABLE } from './dependency-error';
import { bindService } from './service-binding';
import { createLogger } from './logger';
import { startService, versionOf, type RunningService } from './service';

const SERVICE = 'platformadmin.gateway.v1.GatewayService';
const ROOT = path.resolve(__dirname, '../../..');

/** grpc.health.v1 Check of `service` ("" = the whole server). */
async function health(port: number, service = ''): Promise<string> {
  const def = loadSync(path.join(path.dirname(require.resolve('grpc-health-check/package.json')), 'proto/health/v1/health.proto'), {
    enums: String,
  });
  const Health = (loadPackageDefinition(def) as any).grpc.health.v1.Health;
  const client: Client & { check(req: object, cb: (err: Error | null, res: any) => void): void } = new Health(
    `127.0.0.1:${port}`,
    credentials.createInsecure(),
  );
  try {
    return await new Promise((resolve, reject) => client.check({ service }, (err, res) => (err ? reject(err) : resolve(res.status))));
  } finally {
    client.close();
  }
}

/** A service serving the gateway's GetVersion-only contract, with or without the bus. */
const start = (env: Record<string, string>, bus: boolean, log = createLogger('bus-user', 'silent')) =>
  startService(
    {
      name: 'bus-user',
      protoPackage: 'gateway',
      bus,
      grpc: () => [bindService(gatewayV1.GatewayServiceService, { getVersion: async () => versionOf('bus-user') })],
    },
    loadConfig(serviceEnv, { GRPC_PORT: '0', LOG_LEVEL: 'silent', BUS_NAMESPACE: `bus-user-${process.pid}`, ...env }),
    log,
  );

/** A logger whose JSON lines the test reads. */
function capturedLog() {
  const lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  const log = createLogger('bus-user', 'info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe('readiness follows the bus', () => {
  let nats: PrivateNats;
  let running: RunningService | undefined;
  beforeAll(async () => {
    nats = await startPrivateNats();
  });
  afterAll(async () => {
    await running?.stop();
    await nats?.dispose();
  });

  it('reports the service NOT_SERVING while its NATS connection is lost and SERVING after the reconnect; the server stays SERVING', async () => {
    running = await start({ NATS_URL: nats.url }, true);
    const port = running.grpcPort;
    expect(await health(port, SERVICE)).toBe('SERVING');

    await nats.kill();
    await eventually(async () => (await health(port, SERVICE)) === 'NOT_SERVING', 5_000, 50);
    expect(running.ctx.bus!.health().connected).toBe(false);
    // Liveness (the whole server) is not affected: restarting the pod would not bring NATS back.
    expect(await health(port)).toBe('SERVING');

    await nats.start();
    await eventually(async () => (await health(port, SERVICE)) === 'SERVING', 10_000, 50);
    expect(running.ctx.bus!.health().connected).toBe(true);
    await running.stop();
    running = undefined;
  }, 30_000);

  it('does not connect, nor depend on NATS, for a service that does not use the bus', async () => {
    const closed = await freePort();
    const service = await start({ NATS_URL: `nats://127.0.0.1:${closed}` }, false);
    try {
      expect(service.ctx.bus).toBeUndefined();
      expect(await health(service.grpcPort, SERVICE)).toBe('SERVING');
    } finally {
      await service.stop();
    }
  });
});

describe('a failed bus request', () => {
  let nats: PrivateNats;
  beforeAll(async () => {
    nats = await startPrivateNats();
  });
  afterAll(() => nats?.dispose());

  it('fails alone, logged once with its subject, while the process keeps serving and stays ready', async () => {
    const { log, lines } = capturedLog();
    const namespace = `failing-${process.pid}`;
    const running = await start({ NATS_URL: nats.url, BUS_NAMESPACE: namespace }, true, log);
    const bus = running.ctx.bus!;
    try {
      // Nobody answers: that request fails, with its subject in the log, and nothing else does.
      await expect(bus.request('agent-rpc.v1.nobody.resource-history', {}, 200)).rejects.toBeInstanceOf(BusTimeoutError);
      expect(lines.filter((l) => l.msg === 'bus request failed')).toEqual([
        expect.objectContaining({ level: 'warn', subject: 'agent-rpc.v1.nobody.resource-history', code: '503' }),
      ]);
      // The notice stream gone and unmakeable (another stream holds its subjects): the fence a cache takes answers
      // false, so the cache serves nothing it kept; it used to reject, which the caches' reconnect handler left unhandled.
      await bus.listen('reports-changed', () => {});
      const admin = await connect({ servers: nats.url });
      try {
        const jsm = await admin.jetstreamManager();
        await jsm.streams.delete(`${namespace.toUpperCase().replace(/-/g, '_')}_NOTICES`);
        await jsm.streams.add({ name: 'SQUATTER', subjects: [`${namespace}.notices.>`] });
        await expect(bus.caughtUp()).resolves.toBe(false);
        await jsm.streams.delete('SQUATTER');
      } finally {
        await admin.close();
      }
      // Still serving, still ready (the connection is up), and the bus still carries what this process asks.
      expect(await health(running.grpcPort, SERVICE)).toBe('SERVING');
      await bus.reply('echo', async (p) => p);
      await expect(bus.request('echo', { still: 'here' })).resolves.toEqual({ still: 'here' });
    } finally {
      await running.stop();
    }
  }, 30_000);
});

describe('an unreachable NATS at start', () => {
  it('stops the process with exit code 69 and one line naming NATS_URL, host:port only, no stack', async () => {
    const closed = await freePort();
    const child = spawn(
      path.join(ROOT, 'node_modules/.bin/tsx'),
      ['--tsconfig', 'tsconfig.base.json', 'libs/service-kit/src/fixtures/bus-app.ts'],
      {
        cwd: ROOT,
        // A metrics port of its own: the default 9464 may be taken on a shared machine, which is another failure.
        env: {
          ...process.env,
          NATS_URL: `nats://platform:s3cret-pass@127.0.0.1:${closed}`,
          BUS_NAMESPACE: 'bus-app',
          GRPC_PORT: '0',
          METRICS_PORT: String(await freePort()),
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

    expect({ code, stdout, stderr }).toEqual({
      code: EXIT_DEPENDENCY_UNAVAILABLE,
      stdout: '',
      stderr:
        `bus-app: cannot use NATS at 127.0.0.1:${closed} (NATS_URL): not reachable within 5 s (connection refused); ` +
        'start NATS with JetStream there (nats-server -js) or point NATS_URL at a running one\n',
    });
  }, 30_000);
});

describe('a shutdown', () => {
  it("stops the app's own work while its outbox and database still work, and ends", async () => {
    const db = await createTestDatabase();
    const done: string[] = [];
    let box: Outbox | undefined;
    try {
      const running = await startService(
        {
          name: 'stop-order',
          protoPackage: 'gateway',
          database: { schema: 'stop_order', migrations: [outboxMigration('20260101000000_outbox')] },
          grpc: (ctx) => {
            box = ctx.outbox({ seen: { apply: async () => void done.push('effect') } });
            return [bindService(gatewayV1.GatewayServiceService, { getVersion: async () => versionOf('stop-order') })];
          },
          // Background work that writes through the outbox as it is stopped, as a sweep in progress does.
          onStop: async () => {
            await box!.run(async (trx, stage) => {
              await trx.raw('select 1');
              stage('seen', {});
            });
            done.push('own work');
          },
        },
        loadConfig(serviceEnv, { GRPC_PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: db.url, DATA_DIR: os.tmpdir() }),
      );
      await running.stop();
      expect(done).toEqual(['effect', 'own work']);
      // Stopped, the outbox refuses a change instead of taking a connection again.
      await expect(box!.run(async () => 0)).rejects.toThrow(UnavailableError);
    } finally {
      await db.drop();
    }
  });
});
