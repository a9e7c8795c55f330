import type * as http from 'node:http';
import { credentials, makeGenericClientConstructor, type Client, type ServiceDefinition } from '@grpc/grpc-js';
import type { Bus } from '@platform/bus';
import type { Database } from '@platform/db';
import { within } from '@platform/errors';

/**
 * HTTP health for the apps that serve HTTP (gateway, marketplace listener): `/healthz` says the process is
 * alive, `/readyz` whether it can serve now, with the state of each dependency:
 *
 *   200 {"status":"ready","checks":{"database":"up","authz":"up",...},"required":["database","authz"]}
 *   503 {"status":"not ready","checks":{"database":"down",...},"required":[...]}
 *
 * Only `required` dependencies decide; the others are reported (the gateway answers 503 for their routes
 * alone while they are down). Each check has a short deadline, so a hung dependency reads as down.
 */

/** A dependency the app needs: resolves when usable, rejects (or times out) when not. */
export interface DependencyCheck {
  name: string;
  /** Whether the app is not ready while this one is down. */
  required: boolean;
  probe(): Promise<void>;
}

/** How long one probe may take before its dependency counts as down. */
export const PROBE_TIMEOUT_MS = 1_000;

export const HEALTH_PATHS = { live: '/healthz', ready: '/readyz' } as const;

export interface Readiness {
  ready: boolean;
  body: { status: 'ready' | 'not ready'; checks: Record<string, 'up' | 'down'>; required: string[] };
}

/** Runs every probe at once, each bounded by `timeoutMs`. */
export async function readiness(checks: DependencyCheck[], timeoutMs = PROBE_TIMEOUT_MS): Promise<Readiness> {
  const states = await Promise.all(
    checks.map((c) =>
      within(c.probe(), timeoutMs, 'timed out').then(
        () => 'up' as const,
        () => 'down' as const,
      ),
    ),
  );
  const body: Readiness['body'] = { status: 'ready', checks: {}, required: checks.filter((c) => c.required).map((c) => c.name) };
  checks.forEach((c, i) => (body.checks[c.name] = states[i]));
  const ready = checks.every((c, i) => !c.required || states[i] === 'up');
  if (!ready) body.status = 'not ready';
  return { ready, body };
}

const json = (res: http.ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));

/** Answers `/healthz`: 200 `{"status":"alive"}` while the process serves at all. */
export function answerLive(res: http.ServerResponse): void {
  json(res, 200, { status: 'alive' });
}

/** Answers `/readyz` from the checks: 200 when every required dependency is up, else 503. */
export async function answerReady(res: http.ServerResponse, checks: DependencyCheck[]): Promise<void> {
  const { ready, body } = await readiness(checks);
  json(res, ready ? 200 : 503, body);
}

/** The app's own schema answers a trivial query. */
export function databaseCheck(db: Database): DependencyCheck {
  return { name: 'database', required: true, probe: async () => void (await db.knex.raw('select 1')) };
}

/** The app's bus is connected (the in-process bus always is). */
export function busCheck(bus: Bus): DependencyCheck {
  return {
    name: 'bus',
    required: true,
    probe: async () => {
      if (!bus.health().connected) throw new Error('bus disconnected');
    },
  };
}

/** The checks every app with a database and/or a bus has. */
export function ownDependencyChecks(ctx: { db?: Database; bus?: Bus }): DependencyCheck[] {
  return [...(ctx.db ? [databaseCheck(ctx.db)] : []), ...(ctx.bus ? [busCheck(ctx.bus)] : [])];
}

type HealthClient = Client & {
  check(req: { service: string }, opts: { deadline: Date }, cb: (err: Error | null, res?: { status: string }) => void): void;
};
/** The health client's class, made on the first check: grpc-health-check brings its own proto loader and protobufjs. */
let healthClientCtor: ReturnType<typeof makeGenericClientConstructor> | undefined;
function HealthClientClass(): ReturnType<typeof makeGenericClientConstructor> {
  if (!healthClientCtor) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
    const { service } = require('grpc-health-check') as typeof import('grpc-health-check');
    healthClientCtor = makeGenericClientConstructor(service as unknown as ServiceDefinition, 'grpc.health.v1.Health');
  }
  return healthClientCtor;
}

/** A gRPC app asked through the standard grpc.health.v1 Check whether `service` is SERVING (its readiness). */
export interface GrpcServingCheck extends DependencyCheck {
  close(): void;
}

/** A check of a gRPC app's readiness: grpc.health.v1 Check of its service at `address`, up only when SERVING. */
export function grpcServingCheck(name: string, address: string, service: string, required: boolean): GrpcServingCheck {
  const client = new (HealthClientClass())(address, credentials.createInsecure(), {
    // Reconnect as quickly as the API clients do, so readiness follows a restarted backend within a couple of seconds.
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2000,
  }) as unknown as HealthClient;
  return {
    name,
    required,
    probe: () =>
      new Promise<void>((resolve, reject) =>
        client.check({ service }, { deadline: new Date(Date.now() + PROBE_TIMEOUT_MS) }, (err, res) => {
          if (err) return reject(err);
          if (res?.status !== 'SERVING') return reject(new Error(`${name} is ${res?.status}`));
          resolve();
        }),
      ),
    close: () => client.close(),
  };
}
