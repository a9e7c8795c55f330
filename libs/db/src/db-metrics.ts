import type { Knex } from 'knex';
import { Counter, Gauge, Histogram, secondsSince, type HistogramChild } from '@platform/telemetry';
import type { ResultCache } from './result-cache';

/**
 * Database metrics from knex's own events: query latency by pool and outcome, and the connection pool's
 * state read at scrape time. A pool is one knex: an app's schema on a real server, or `embedded` for the one
 * PGlite connection all apps of the process share (its queries are counted once, not once per app).
 */

const queries = new Histogram('db_query_duration_seconds', 'Time a database query took, by pool and outcome (ok, error).', [
  'pool',
  'outcome',
]);
const connections = new Gauge(
  'db_pool_connections',
  'Connections of a database pool by state: used, free, pending_acquires (callers waiting for one), pending_creates.',
);

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
}

interface QueryEvent {
  __knexQueryUid?: string;
}

const observed = new WeakSet<Knex>();

/** Counts `knex`'s queries and reports its pool as `pool` until it is destroyed. Once per knex. */
export function observeKnex(knex: Knex, pool: string): void {
  if (observed.has(knex)) return;
  observed.add(knex);
  const ok: HistogramChild = queries.child(pool, 'ok');
  const failed: HistogramChild = queries.child(pool, 'error');
  const started = new Map<string, number>();
  const finish = (query: QueryEvent, child: HistogramChild) => {
    const uid = query?.__knexQueryUid;
    if (uid === undefined) return;
    const start = started.get(uid);
    if (start === undefined) return;
    started.delete(uid);
    child.observe(secondsSince(start));
  };
  knex.on('query', (query: QueryEvent) => {
    if (query?.__knexQueryUid !== undefined) started.set(query.__knexQueryUid, performance.now());
  });
  knex.on('query-response', (_response: unknown, query: QueryEvent) => finish(query, ok));
  knex.on('query-error', (_err: unknown, query: QueryEvent) => finish(query, failed));

  const stop = connections.source((add) => {
    const tarn = (knex.client as { pool?: Partial<TarnPool> }).pool;
    // knex drops its pool when destroyed: the pool leaves the scrape (tests and restarts open and close many).
    if (!tarn) return stop();
    if (typeof tarn.numUsed !== 'function') return;
    add({ pool, state: 'used' }, tarn.numUsed());
    add({ pool, state: 'free' }, tarn.numFree!());
    add({ pool, state: 'pending_acquires' }, tarn.numPendingAcquires!());
    add({ pool, state: 'pending_creates' }, tarn.numPendingCreates!());
  });
}

const cacheHits = new Counter(
  'db_result_cache_hits_total',
  "Reads the embedded database's result cache answered without running them (counted in db_query_duration_seconds too).",
  ['pool'],
);
const cacheEntries = new Gauge('db_result_cache_entries', "Answers the embedded database's result cache keeps until the next write.");

/** Counts the answers `cache` gives and reports how many it keeps, as `pool`, until the answered stop is called. */
export function observeResultCache(cache: ResultCache, pool: string): () => void {
  const hits = cacheHits.child(pool);
  cache.onHit = () => hits.inc();
  return cacheEntries.source((add) => add({ pool }, cache.size));
}
