import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { credentials, loadPackageDefinition, type Client } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { gatewayV1 } from '@platform/proto';
import { eventually, freePort, startPrivateNats, type PrivateNats } from '@platform/testing';
import { loadConfig, serviceEnv } from './config';
import { EXIT_DEPENDENCY_UNAVAILABLE } from './dependency-error';
import { bindService } from './grpc-server';
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
const start = (env: Record<string, string>, bus: boolean) =>
  startService(
    {
      name: 'bus-user',
      protoPackage: 'gateway',
      bus,
      grpc: () => [bindService(gatewayV1.GatewayServiceService, { getVersion: async () => versionOf('bus-user') })],
    },
    loadConfig(serviceEnv, { GRPC_PORT: '0', LOG_LEVEL: 'silent', ...env }),
    createLogger('bus-user', 'silent'),
  );

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
