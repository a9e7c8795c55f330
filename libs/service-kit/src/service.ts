import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Bus } from '@platform/bus';
import { within } from '@platform/errors';
import { openDatabase, Outbox, type Database, type EffectHandler, type Migration } from '@platform/db';
import { common, protoFilesOf } from '@platform/proto';
import { useAppKeys } from './app-credential';
import { openBus, prepareInstallationTable, readinessFollowsBus } from './bus-readiness';
import { CredentialCache, grpcCallerAccess, type CallerAccess } from './caller';
import type { ServiceConfig } from './config';
import { startGrpcServer } from './grpc-server';
import { type ServiceBinding } from './service-binding';
import { createHttpServer } from './http-server';
import { createLogger, type Logger } from './logger';
import { databaseStartError, portError, quietGrpcBindErrors } from './start-errors';
import { refuseUnfinishedRestore } from './unfinished-restore';
import { PLATFORM_VERSION } from './version';

/** What a service's handlers are built from. */
export interface ServiceContext {
  name: string;
  log: Logger;
  /** The service's own schema; absent for services that own nothing persistent (the gateway). */
  db?: Database;
  /** The message bus; present only when the spec says `bus: true`. */
  bus?: Bus;
  /**
   * The service's outbox over its schema (which lists `outboxMigration`), with the handlers of its effect
   * kinds; its relay runs from now until the service stops. Call once.
   */
  outbox(handlers: Record<string, EffectHandler>): Outbox;
}

export interface ServiceSpec {
  /** App name, e.g. "orgs-teams". */
  name: string;
  /** Proto package directory under proto/platform, e.g. "orgsteams". */
  protoPackage: string;
  /** Postgres schema the service owns, with its migrations. */
  database?: { schema: string; migrations: Migration[] };
  /**
   * The service uses the message bus: it connects at start (NATS_URL, else the in-process bus; NATS that
   * cannot be used stops the start with a DependencyError). `true`: its gRPC services report NOT_SERVING
   * while the bus is disconnected. `'notices'`: it only sends or listens to notices (cache invalidations) and
   * copes without them, so its readiness does not follow the bus. Without it the service neither connects
   * nor depends on NATS.
   */
  bus?: boolean | 'notices';
  /**
   * False for an app that sends no notices: nothing it writes is kept by another app or replica (the gateway). Its
   * replicas then send no heartbeats on the notice stream, which every process would receive each second from each of
   * them; should it send a notice after all, it beats from then on (readers start over once). Default true.
   */
  sendsNotices?: boolean;
  /** gRPC services to serve, built once the database and bus are open. */
  grpc(ctx: ServiceContext): ServiceBinding<any>[] | Promise<ServiceBinding<any>[]>;
  /**
   * How this app answers a service account's questions without a call (authz, from its own engine); by default
   * they are asked of authz over gRPC.
   */
  holdsEach?(ctx: ServiceContext): CallerAccess['holdsEach'];
  /** An HTTP server (gateway, marketplace listener), built after the gRPC server is up. */
  http?: {
    port: number;
    /** The interface it listens on; default every interface. */
    host?: string;
    /** The variable naming the port, for the line a port in use stops the start with; default HTTP_PORT. */
    portSetting?: string;
    handler(ctx: ServiceContext): http.RequestListener | Promise<http.RequestListener>;
  };
  /**
   * Stops the app's background work, then closes its clients and consumers: on shutdown right after the servers stopped,
   * while its outbox, bus and database still work (they close after it).
   */
  onStop?(): Promise<void>;
}

/** A started app. */
export interface RunningService {
  name: string;
  grpcPort: number;
  httpPort?: number;
  ctx: ServiceContext;
  /** Started with RUN_MIGRATIONS_ONLY: the schema was migrated and closed again, nothing serves (grpcPort 0). */
  migrationsOnly?: boolean;
  /**
   * The first step of a shutdown on SIGTERM: reports the app not ready, has its HTTP answers close their connections,
   * and keeps serving for SHUTDOWN_DELAY_MS, while Kubernetes takes the pod out of its Services.
   */
  drain?(): Promise<void>;
  /** Stops taking calls, lets in-flight ones finish, closes pools. Safe to call twice. */
  stop(): Promise<void>;
}

/** The GetVersion answer every service gives. */
export function versionOf(service: string): common.GetVersionResponse {
  return { version: PLATFORM_VERSION, service };
}

/**
 * The composition every app's start() goes through: open its schema and migrate, connect the bus,
 * serve gRPC (with health and reflection) and optionally HTTP, and stop gracefully.
 */
export async function startService(
  spec: ServiceSpec,
  config: ServiceConfig,
  log = createLogger(spec.name, config.LOG_LEVEL),
): Promise<RunningService> {
  // The steps of a stop, run last registered first, each named for the line a stop that does not end says.
  const cleanups: { what: string; run: () => Promise<void> }[] = [];
  let closing: string | undefined;
  const stopSteps = async () => {
    for (let step = cleanups.pop(); step; step = cleanups.pop()) {
      closing = step.what;
      const what = step.what;
      await step.run().catch((err) => log.error({ err, step: what }, 'shutdown step failed'));
    }
    closing = undefined;
  };
  // A close that waits on a server that no longer answers (a NATS server stopped but not gone, a database behind a
  // route that dropped) would keep the process forever: an orphaned app once ignored SIGTERM for an hour. The stop
  // gives up after SHUTDOWN_TIMEOUT_MS, naming the step it waited on; what it left open ends with the process.
  const stopAll = () =>
    within(
      stopSteps(),
      config.SHUTDOWN_TIMEOUT_MS,
      () => `the stop did not end within ${config.SHUTDOWN_TIMEOUT_MS} ms (SHUTDOWN_TIMEOUT_MS): still closing ${closing ?? 'nothing'}`,
    );
  // The app's background work and clients stop once: right after its servers (registered again below, so it runs
  // before the outbox, bus and database its work uses are closed: a sweep that ran on after the outbox stopped used to
  // take a connection the database's close then waited for forever), or last when the start failed before the servers.
  let onStop = spec.onStop;
  const stopOwnWork = async () => {
    const fn = onStop;
    onStop = undefined;
    await fn?.();
  };
  cleanups.push({ what: 'its background work', run: stopOwnWork });
  try {
    let db: Database | undefined;
    if (spec.database) {
      // Never on what an interrupted restore left (exit 78): checked before the embedded database is made.
      await refuseUnfinishedRestore(config);
      db = await openDatabase({
        url: config.DATABASE_URL,
        dataDir: config.DATA_DIR,
        schema: spec.database.schema,
        resultCacheEntries: config.EMBEDDED_RESULT_CACHE_ENTRIES,
      }).catch((err) => {
        throw databaseStartError(err, config.DATABASE_URL);
      });
      const opened = db;
      cleanups.push({ what: 'the database', run: () => opened.close() });
      await refuseUnfinishedRestore(config, db);
      // One line per migration at debug: a first start applies ~40, which buried the admin password and the URL;
      // the "database ready" line below says how many were applied.
      const applied = await db.migrate(spec.database.migrations, (msg) => log.debug(msg));
      // A new embedded database may come migrated (a copy: migrated-database.ts); what it holds is new here all the same.
      const newHere = db.created ? spec.database.migrations.length : applied.length;
      log.info({ schema: db.schema, applied: newHere, embedded: !config.DATABASE_URL }, 'database ready');
      // The migration Job makes the installation's table too, so serving apps need no right to create a schema; the
      // installation itself is made at the first start that serves (a template database copied for many keeps none).
      if (config.RUN_MIGRATIONS_ONLY) await prepareInstallationTable(db.knex);
    }
    if (config.RUN_MIGRATIONS_ONLY) {
      // The chart's migration Job (entrypoint.sh migrate): the schema is migrated; no bus, no servers.
      await stopAll();
      log.info(`${spec.name}: migrations applied, not serving (RUN_MIGRATIONS_ONLY)`);
      const ctx: ServiceContext = {
        name: spec.name,
        log,
        outbox() {
          throw new Error(`${spec.name} runs migrations only`);
        },
      };
      return { name: spec.name, grpcPort: 0, ctx, migrationsOnly: true, stop: async () => {} };
    }
    const bus = spec.bus ? await openBus(config, spec.name, log, db, spec.sendsNotices ?? true) : undefined;
    // The in-process bus belongs to the whole process; only a NATS connection is this app's to close.
    if (bus && config.NATS_URL) cleanups.push({ what: 'the NATS connection', run: () => bus.close() });
    const ctx: ServiceContext = {
      name: spec.name,
      log,
      db,
      bus,
      outbox(handlers) {
        if (!db) throw new Error(`${spec.name} has no database for an outbox`);
        const outbox = new Outbox(db, handlers, { log, leaseMs: config.OUTBOX_LEASE_MS, relayIntervalMs: config.OUTBOX_RELAY_INTERVAL_MS });
        outbox.start();
        cleanups.push({ what: 'the outbox relay', run: () => outbox.stop() });
        return outbox;
      },
    };

    const credential = useAppKeys(config.PLATFORM_APP_KEYS, spec.name);
    if (!credential.shared) log.warn('PLATFORM_APP_KEYS is not set: only apps of this process can call this one (docs/grpc.md)');
    const services = await spec.grpc(ctx);
    const credentials =
      config.SERVICE_ACCOUNT_CACHE_TTL_MS > 0 && bus
        ? new CredentialCache(config.SERVICE_ACCOUNT_CACHE_TTL_MS, undefined, `${spec.name}.credentials`)
        : undefined;
    if (credentials) {
      const unfollow = await credentials.follow(bus!);
      cleanups.push({ what: 'the credential cache', run: unfollow });
    }
    const access = grpcCallerAccess({
      orgsTeamsAddress: config.ORGS_TEAMS_GRPC_ADDR,
      authzAddress: config.AUTHZ_GRPC_ADDR,
      cache: credentials,
      holdsEach: spec.holdsEach?.(ctx),
    });
    cleanups.push({ what: 'the callers’ clients', run: async () => access.close() });
    quietGrpcBindErrors();
    const grpc = await startGrpcServer({
      name: spec.name,
      port: config.GRPC_PORT,
      host: config.GRPC_HOST,
      access,
      services,
      protoFiles: protoFilesOf(spec.protoPackage),
      log,
      maxMessageBytes: config.GRPC_MAX_MESSAGE_BYTES,
    }).catch((err) => {
      throw portError(err, 'GRPC_PORT', config.GRPC_PORT);
    });
    cleanups.push({ what: 'its background work', run: stopOwnWork });
    cleanups.push({ what: 'the gRPC server', run: () => grpc.shutdown() });
    if (bus && spec.bus === true) cleanups.push({ what: 'the bus readiness watch', run: readinessFollowsBus(bus, grpc, log) });

    let httpPort: number | undefined;
    let draining = false;
    if (spec.http) {
      const server = createHttpServer(await spec.http.handler(ctx), config);
      // While draining, each answer closes its connection: a keep-alive client opens its next one through the
      // Service, to another pod, instead of finding this one closed under a request it just sent.
      server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
        if (draining) res.shouldKeepAlive = false;
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) => reject(portError(err, spec.http!.portSetting ?? 'HTTP_PORT', spec.http!.port)));
        server.listen(spec.http!.port, spec.http!.host, () => resolve());
      });
      httpPort = (server.address() as AddressInfo).port;
      cleanups.push({
        what: 'the HTTP server',
        run: () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
            // Requests still running after the grace period are cut so shutdown always ends.
            setTimeout(() => server.closeAllConnections(), 10_000).unref();
          }),
      });
    }
    log.info({ grpcPort: grpc.port, httpPort }, `${spec.name} started`);
    const drain = async () => {
      draining = true;
      grpc.setServing(false);
      if (config.SHUTDOWN_DELAY_MS > 0) {
        log.info({ delayMs: config.SHUTDOWN_DELAY_MS }, 'draining: not ready, still answering');
        await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DELAY_MS));
      }
    };
    return { name: spec.name, grpcPort: grpc.port, httpPort, ctx, drain, stop: stopAll };
  } catch (err) {
    await stopAll().catch((stopErr) => log.error({ err: stopErr }, 'stopping after a failed start'));
    throw err;
  }
}

/** Runs `drain`, then `stop`, once on SIGTERM or SIGINT, then exits. */
export function stopOnSignal(stop: () => Promise<void>, log: Logger, drain: () => Promise<void> = async () => {}): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    drain()
      .then(stop)
      .then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
