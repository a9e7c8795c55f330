import { randomBytes, randomUUID } from 'node:crypto';
import { BusConnectError, BusTimeoutError, connectBus, type Bus, type BusHealth } from '@platform/bus';
import type { Knex } from 'knex';
import { openDatabase, type Database } from '@platform/db';
import type { ServiceConfig } from './config';
import { natsDependencyError } from './dependency-error';
import type { RunningGrpcServer } from './grpc-server';
import type { Logger } from './logger';
import { refuseUnfinishedRestore } from './unfinished-restore';

type BusConfig = Pick<ServiceConfig, 'NATS_URL' | 'BUS_NAMESPACE' | 'DATABASE_URL' | 'DATA_DIR'>;

/**
 * Connects an app's bus (NATS_URL, else the in-process bus); NATS that cannot be used becomes a one-line DependencyError.
 * On NATS every name is the installation's (`busNamespace`); `db` is the app's database, when it has one.
 */
export async function openBus(config: BusConfig, name: string, log: Logger, db?: Database, sendsNotices = true): Promise<Bus> {
  // BUS_NAMESPACE given, an app without a database of its own leaves the claim of the namespace to those with one.
  const installation = config.NATS_URL && (db || !config.BUS_NAMESPACE) ? await installationOf(config, db) : undefined;
  try {
    return await connectBus(config.NATS_URL, name, {
      log,
      namespace: config.BUS_NAMESPACE ?? installation?.busNamespace,
      installation: installation?.id,
      sendsNotices,
    });
  } catch (err) {
    if (err instanceof BusConnectError) throw natsDependencyError(err);
    throw err;
  }
}

/**
 * The schema and table keeping what identifies the installation (no app owns it: every app of the installation reads
 * it, whichever starts first makes it), on the database every app of the installation shares.
 */
export const INSTALLATION_SCHEMA = 'platform_installation';
export const INSTALLATION_TABLE = 'installation';
/** Serializes the first starts of an installation's apps, which would each make a namespace of their own. */
const INSTALLATION_LOCK = 7_245_310_911;

/** What identifies an installation: its id, and its namespace on NATS unless BUS_NAMESPACE names another. */
export interface Installation {
  id: string;
  busNamespace: string;
}

/**
 * The installation as its first start made it (an id, and a namespace on NATS of `platform-` and 12 random hex digits)
 * and kept it in its database, so the apps of one installation agree on it and two installations never share a
 * namespace by accident (docs/configuration.md, BUS_NAMESPACE). `db` is the app's own database, when it has one.
 */
export async function installationOf(config: Pick<BusConfig, 'DATABASE_URL' | 'DATA_DIR'>, db?: Database): Promise<Installation> {
  if (db) return keptInstallation(db.knex);
  // An app without a database of its own (the gateway on the embedded database) reads it from the installation's.
  await refuseUnfinishedRestore(config);
  const own = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    schema: INSTALLATION_SCHEMA,
    resultCacheEntries: 0,
  });
  try {
    return await keptInstallation(own.knex);
  } finally {
    await own.close();
  }
}

async function keptInstallation(knex: Database['knex']): Promise<Installation> {
  return knex.transaction(async (trx) => {
    await lockedInstallationTable(trx);
    const kept = await readInstallation(trx);
    if (kept) return kept;
    const made = newInstallation();
    await trx.withSchema(INSTALLATION_SCHEMA).table(INSTALLATION_TABLE).insert({ id: made.id, bus_namespace: made.busNamespace });
    return made;
  });
}

/** The installation's table, made if missing, under the lock that serializes first starts. */
async function lockedInstallationTable(trx: Knex.Transaction): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(?)', [INSTALLATION_LOCK]);
  // Looked up first: `create schema if not exists` needs the right to create one even when it exists.
  if (await installationTableExists(trx)) return;
  await trx.raw('create schema if not exists ??', [INSTALLATION_SCHEMA]);
  await trx.raw(
    'create table if not exists ??.?? (id text primary key, bus_namespace text not null, created_at timestamptz not null default now())',
    [INSTALLATION_SCHEMA, INSTALLATION_TABLE],
  );
}

/** A new installation: a random id, and a namespace of `platform-` and 12 random hex digits. */
export function newInstallation(): Installation {
  return { id: randomUUID(), busNamespace: `platform-${randomBytes(6).toString('hex')}` };
}

/** The installation a database keeps, if it keeps one yet (read only: a backup reads it in its snapshot). */
export async function readInstallation(knex: Knex | Knex.Transaction): Promise<Installation | undefined> {
  if (!(await installationTableExists(knex))) return undefined;
  const kept = (await knex.withSchema(INSTALLATION_SCHEMA).table(INSTALLATION_TABLE).first('id', 'bus_namespace')) as
    { id: string; bus_namespace: string } | undefined;
  return kept && { id: kept.id, busNamespace: kept.bus_namespace };
}

/** Makes the installation's table if missing, without making an installation (the migration Job's part). */
export async function prepareInstallationTable(knex: Knex): Promise<void> {
  await knex.transaction((trx) => lockedInstallationTable(trx));
}

async function installationTableExists(knex: Knex | Knex.Transaction): Promise<boolean> {
  const table = await knex('information_schema.tables')
    .where({ table_schema: INSTALLATION_SCHEMA, table_name: INSTALLATION_TABLE })
    .first();
  return !!table;
}

/**
 * Makes `installation` the one the database keeps, in place of any other: a restore's (the archive's, or a new one).
 * `undefined` removes it, so the next start makes one.
 */
export async function replaceInstallation(knex: Knex, installation: Installation | undefined): Promise<void> {
  await knex.transaction(async (trx) => {
    await lockedInstallationTable(trx);
    await trx.withSchema(INSTALLATION_SCHEMA).table(INSTALLATION_TABLE).delete();
    if (installation)
      await trx
        .withSchema(INSTALLATION_SCHEMA)
        .table(INSTALLATION_TABLE)
        .insert({ id: installation.id, bus_namespace: installation.busNamespace });
  });
}

/**
 * Readiness of an app that uses the bus: its gRPC services report NOT_SERVING on grpc.health.v1 while the
 * bus is disconnected and SERVING again once it reconnects. Returns how to stop following.
 */
export function readinessFollowsBus(bus: Bus, grpc: Pick<RunningGrpcServer, 'setServing'>, log: Logger): () => Promise<void> {
  const apply = ({ connected }: BusHealth, changed: boolean) => {
    grpc.setServing(connected);
    if (changed)
      log.info({ serving: connected }, connected ? 'ready again: message bus reconnected' : 'not ready: message bus disconnected');
  };
  const stop = bus.onHealthChange((health) => apply(health, true));
  // The bus may have changed between connecting and serving.
  apply(bus.health(), !bus.health().connected);
  return async () => stop();
}

/** Whether an error came from the bus (a NATS client error, or a request nobody answered). */
function isBusFailure(err: unknown): boolean {
  return err instanceof BusTimeoutError || (err as Error)?.name === 'NatsError';
}

let guarded = false;

/**
 * The last line of defence behind the bus's own handling: a failed bus question that nothing handled is logged (one
 * line, its code and message, no credentials) and the process goes on serving; its readiness follows the connection.
 * Any other unhandled rejection is a fault of ours: logged with its stack, and the process exits (code 1) as Node's
 * default would have it.
 */
export function keepServingOnBusFailures(log: Logger, exit: (code: number) => void = (code) => process.exit(code)): () => void {
  const onRejection = (reason: unknown) => {
    if (isBusFailure(reason)) {
      const { code, message } = reason as { code?: string; message?: string };
      log.error({ code, reason: message }, 'a bus request failed and nothing handled it; serving on');
      return;
    }
    log.fatal({ err: reason }, 'unhandled rejection');
    exit(1);
  };
  if (guarded) return () => {};
  guarded = true;
  process.on('unhandledRejection', onRejection);
  return () => {
    guarded = false;
    process.off('unhandledRejection', onRejection);
  };
}
