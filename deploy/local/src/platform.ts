import { authzApp } from '@platform/app-authz';
import { orgsTeamsApp } from '@platform/app-orgs-teams';
import { contractsLicensingApp } from '@platform/app-contracts-licensing';
import { billingDashboardApp } from '@platform/app-billing-dashboard';
import { metricsproxyApp } from '@platform/app-metricsproxy';
import { clustersApp } from '@platform/app-clusters';
import { marketplaceListenerApp } from '@platform/app-marketplace-listener';
import { gatewayApp } from '@platform/app-gateway';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { hasEmbeddedDatabase, keptMigratedDatabase, openDatabase, type Database } from '@platform/db';
import {
  embeddedDatabases,
  loadConfig,
  lockDataDir,
  portError,
  portVar,
  RESTORE_MARKER_FILE,
  serviceEnv,
  startApp,
  type AppDefinition,
  type RunningService,
} from '@platform/service-kit';

/**
 * The backend apps in start order and the variable naming each one's address: an app starts after those it
 * calls at start (authz first: others write relationships at start; clusters, which calls authz and orgs-teams,
 * before billing-dashboard, which calls both for agent-report ingestion). Every address is known before any app
 * starts (their ports are held from the beginning), since some call each other both ways: billing-dashboard asks
 * contracts-licensing about licenses, contracts-licensing asks billing-dashboard about usage; clusters asks orgs-teams
 * about bus accounts, orgs-teams asks clusters to connect owners to their clusters.
 */
const BACKENDS: [AppDefinition<any>, string][] = [
  [authzApp, 'AUTHZ_GRPC_ADDR'],
  [orgsTeamsApp, 'ORGS_TEAMS_GRPC_ADDR'],
  [clustersApp, 'CLUSTERS_GRPC_ADDR'],
  [billingDashboardApp, 'BILLING_DASHBOARD_GRPC_ADDR'],
  [contractsLicensingApp, 'CONTRACTS_LICENSING_GRPC_ADDR'],
  [metricsproxyApp, 'METRICSPROXY_GRPC_ADDR'],
  [marketplaceListenerApp, 'MARKETPLACE_LISTENER_GRPC_ADDR'],
];
/** Every app of the platform, in start order. */
export const ALL: AppDefinition<any>[] = [...BACKENDS.map(([app]) => app), gatewayApp];

/**
 * A new embedded database (none under DATA_DIR yet) as a copy of the one every app's migrations made
 * (keptMigratedDatabase, made the first time): each app's migrations then find nothing to apply. Opened before the apps,
 * with their settings, so that they share it, and closed after them. Not where an interrupted restore left its marker
 * (the apps refuse to start there before any database is made), and not when it cannot be had: then each app makes and
 * migrates its schema as before, and says why it cannot.
 */
async function openNewDatabase(dataDir: string, resultCacheEntries: number): Promise<Database | undefined> {
  if (hasEmbeddedDatabase(dataDir) || fs.existsSync(path.join(dataDir, RESTORE_MARKER_FILE))) return undefined;
  const schemas = embeddedDatabases(ALL);
  const migratedDatabase = await keptMigratedDatabase(schemas);
  if (!migratedDatabase) return undefined;
  return openDatabase({ dataDir, schema: schemas[0].schema, resultCacheEntries, migratedDatabase }).catch(() => undefined);
}

/**
 * A free port, held (listened on) until `release`, so nothing else takes it before its app binds it. A client that
 * connects meanwhile (an app started earlier calling this one) is cut off at once: it sees the app unavailable, as
 * it would a closed port, and nothing keeps the port from being released.
 *
 * Drawn below the system's ephemeral range where there is room: a port from that range (what listening on port 0
 * gives) can, in the moment between its release and its app's bind, become the local port of any outgoing
 * connection of any process, which on a busy machine (parallel test workers, hundreds of connections) happened.
 */
async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const below = EPHEMERAL_RANGE_START;
  for (let attempt = 0; below > HELD_PORTS_FROM + 1_000 && attempt < 50; attempt++) {
    const port = HELD_PORTS_FROM + Math.floor(Math.random() * (below - HELD_PORTS_FROM));
    const held = await listenOn(port).catch(() => undefined); // taken: draw another
    if (held) return held;
  }
  return listenOn(0);
}

/** The lowest port of the range held ports are drawn from when the system's ephemeral range leaves room below it. */
const HELD_PORTS_FROM = 20_000;

/** Where the system's ephemeral ports start (Linux: /proc/sys/net/ipv4/ip_local_port_range); 0 where unknown. Read once. */
const EPHEMERAL_RANGE_START = ephemeralRangeStart();
function ephemeralRangeStart(): number {
  try {
    return Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 0;
  } catch {
    return 0;
  }
}

function listenOn(port: number): Promise<{ port: number; release(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as net.AddressInfo;
      resolve({ port: bound, release: () => new Promise<void>((done) => server.close(() => done())) });
    });
  });
}

/**
 * GRPC_PORT_BASE: fixes the apps' gRPC ports, the first app (in ALL's order) on this port and each next one on the
 * next, so a client tried against `npm start` finds them at the same address every start. Unset: free ports.
 */
const grpcPortBaseVar = portVar.max(65535 - 8).optional();

/** The apps' key of this process (every start of the platform in it, as a test may start it twice), unless PLATFORM_APP_KEYS is given. */
const PROCESS_APP_KEY = randomBytes(32).toString('base64');

/** An app of the platform failed to start; the apps started before it were stopped. */
export class AppStartError extends Error {
  constructor(
    readonly app: string,
    override readonly cause: unknown,
  ) {
    super(`${app} failed to start: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'AppStartError';
  }
}

/**
 * Every app's settings, checked before any app starts: a setting only the last app reads (a short
 * MARKETPLACE_API_SECRET) used to stop the start after the others had initialised DATA_DIR. What the launcher sets
 * itself once ports are chosen (each GRPC_PORT, the apps' addresses) is checked with stand-ins. Throws the first
 * app's ConfigError, in start order, as its start would have.
 */
function validateAll(env: NodeJS.ProcessEnv): void {
  const chosenLater: Record<string, string> = { GRPC_PORT: '0', MARKETPLACE_HTTP_PORT: env.MARKETPLACE_HTTP_PORT ?? '0' };
  for (const [, addrVar] of BACKENDS) chosenLater[addrVar] = '127.0.0.1:1';
  chosenLater.MARKETPLACE_LISTENER_HTTP_URL = 'http://127.0.0.1:1';
  for (const app of ALL) {
    try {
      loadConfig(app.env, { ...env, ...chosenLater });
    } catch (err) {
      throw new AppStartError(app.name, err);
    }
  }
}

/** What `startPlatform` starts. */
export interface StartOptions {
  /**
   * Only these apps and the gateway (by name, started in ALL's order); default every one. The others' addresses
   * stay held and cut every connection off, so a call to one of them fails as a call to a stopped app does: tests
   * run a flow against the apps it crosses.
   */
  apps?: readonly string[];
}

/** The whole platform in one process. */
export interface LocalPlatform {
  /** Entry URL, e.g. http://localhost:8080/ */
  url: string;
  apps: Map<string, RunningService>;
  /** Stops one app; the others keep its address. */
  stopApp(name: string): Promise<void>;
  /** Starts a stopped app again on the ports it had. */
  startApp(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Boots every app in this process with the embedded defaults (PGlite under DATA_DIR unless
 * DATABASE_URL, in-process bus unless NATS_URL). Backends listen on free loopback ports that the launcher
 * hands to the apps that call them; the gateway serves HTTP_PORT. On the embedded database DATA_DIR is
 * locked for this process first (until `stop`): a DATA_DIR that another process holds rejects with
 * `DataDirInUseError`, a `ConfigError`, before anything starts.
 */
export async function startPlatform(
  env: NodeJS.ProcessEnv = process.env,
  onProgress: (msg: string) => void = () => {},
  options: StartOptions = {},
): Promise<LocalPlatform> {
  const chosen = options.apps ? ALL.filter((app) => app === gatewayApp || options.apps!.includes(app.name)) : ALL;
  const unknown = options.apps?.filter((name) => !ALL.some((app) => app.name === name)) ?? [];
  if (unknown.length) throw new Error(`no app ${unknown.join(', ')}`);
  // Every app takes the lock again as it starts (it counts its users); this one spans the platform's life.
  const { DATABASE_URL, DATA_DIR, GRPC_PORT_BASE, EMBEDDED_RESULT_CACHE_ENTRIES } = loadConfig(
    {
      DATABASE_URL: serviceEnv.DATABASE_URL,
      DATA_DIR: serviceEnv.DATA_DIR,
      GRPC_PORT_BASE: grpcPortBaseVar,
      EMBEDDED_RESULT_CACHE_ENTRIES: serviceEnv.EMBEDDED_RESULT_CACHE_ENTRIES,
    },
    env,
  );
  // All apps share one metrics registry: the gateway answers /metrics on HTTP_PORT for all of them.
  // The gateway forwards the webhook listener's requests over loopback and names the client in X-Forwarded-For.
  // Only the gateway's HTTP port faces the network: the backends' gRPC ports and the listener stay on loopback, and
  // the apps present one key of this start to each other (unless PLATFORM_APP_KEYS names the release's).
  env = {
    METRICS_ON_HTTP_PORT: 'true',
    MARKETPLACE_TRUSTED_PROXIES: 'loopback',
    PLATFORM_APP_KEYS: PROCESS_APP_KEY,
    ...env,
    GRPC_HOST: '127.0.0.1',
    MARKETPLACE_HTTP_HOST: '127.0.0.1',
  };
  validateAll(env);
  // Every app builds its links on PUBLIC_URL (public-url.ts); unset, it is this machine's address of the gateway. A
  // port chosen by the system (HTTP_PORT=0, as tests start it) is chosen here first, so every app knows it from the start.
  let gatewayPortHold: Awaited<ReturnType<typeof holdPort>> | undefined;
  if (!env.PUBLIC_URL) {
    let port = env.HTTP_PORT || '8080';
    if (port === '0') {
      gatewayPortHold = await holdPort();
      port = String(gatewayPortHold.port);
      env = { ...env, HTTP_PORT: port };
    }
    env = { ...env, PUBLIC_URL: `http://localhost:${port}/` };
  }
  let lock: ReturnType<typeof lockDataDir> | undefined;
  try {
    lock = DATABASE_URL ? undefined : lockDataDir(DATA_DIR);
  } catch (err) {
    await gatewayPortHold?.release();
    throw err;
  }
  const newDatabase = DATABASE_URL ? undefined : await openNewDatabase(DATA_DIR, EMBEDDED_RESULT_CACHE_ENTRIES);
  const apps = new Map<string, RunningService>();
  // Every app's gRPC port, and the listener's HTTP port, once known; a restart reuses them.
  const wiring: Record<string, string> = { GRPC_PORT: '0', MARKETPLACE_HTTP_PORT: env.MARKETPLACE_HTTP_PORT ?? '0' };
  const grpcPorts = new Map<string, number>();
  // Each backend's port, held until the backend binds it, so every address can be handed out before the first start.
  const held = new Map<string, Awaited<ReturnType<typeof holdPort>>>();
  const releaseHeld = async () => {
    for (const [name, h] of [...held]) {
      held.delete(name);
      await h.release();
    }
  };

  const startOne = async (name: string): Promise<void> => {
    const app = ALL.find((a) => a.name === name);
    if (!app) throw new Error(`no app ${name}`);
    if (app === gatewayApp && gatewayPortHold) {
      await gatewayPortHold.release();
      gatewayPortHold = undefined;
    }
    const hold = held.get(name);
    if (hold) {
      held.delete(name);
      await hold.release();
    }
    const running = await startApp(app, { ...env, ...wiring, GRPC_PORT: String(grpcPorts.get(name) ?? 0) });
    grpcPorts.set(name, running.grpcPort);
    const addrVar = BACKENDS.find(([a]) => a === app)?.[1];
    if (addrVar) wiring[addrVar] = `127.0.0.1:${running.grpcPort}`;
    if (app === marketplaceListenerApp) {
      wiring.MARKETPLACE_HTTP_PORT = String(running.httpPort);
      wiring.MARKETPLACE_LISTENER_HTTP_URL = `http://127.0.0.1:${running.httpPort}`;
    }
    apps.set(name, running);
  };
  const stopApp = async (name: string) => {
    const app = apps.get(name);
    apps.delete(name);
    await app?.stop();
  };
  const stop = async () => {
    // Gateway first, so no new work reaches the backends while they drain.
    for (const app of [...ALL].reverse()) await stopApp(app.name);
    await newDatabase?.close();
    await releaseHeld();
    lock?.release();
  };

  try {
    for (const [i, [app, addrVar]] of BACKENDS.entries()) {
      const hold = GRPC_PORT_BASE
        ? await listenOn(GRPC_PORT_BASE + i).catch((err) => {
            throw portError(err, 'GRPC_PORT_BASE', GRPC_PORT_BASE + i);
          })
        : await holdPort();
      held.set(app.name, hold);
      grpcPorts.set(app.name, hold.port);
      wiring[addrVar] = `127.0.0.1:${hold.port}`;
    }
    if (GRPC_PORT_BASE) {
      // The gateway's too, held like the others, so a port in use is said before anything starts.
      const port = GRPC_PORT_BASE + BACKENDS.length;
      held.set(gatewayApp.name, await listenOn(port).catch((err) => Promise.reject(portError(err, 'GRPC_PORT_BASE', port))));
      grpcPorts.set(gatewayApp.name, port);
    }
    for (const [i, app] of chosen.entries()) {
      onProgress(`starting ${app.name} (${i + 1}/${chosen.length})`);
      await startOne(app.name).catch((err) => {
        throw new AppStartError(app.name, err);
      });
    }
  } catch (err) {
    await releaseHeld();
    await gatewayPortHold?.release();
    if (apps.size > 0) onProgress(`stopping ${[...apps.keys()].join(', ')}`);
    await stop();
    throw err;
  }
  return { url: `http://localhost:${apps.get(gatewayApp.name)!.httpPort}/`, apps, stopApp, startApp: startOne, stop };
}
