import type { Database } from '@platform/db';
import type { Logger } from '@platform/service-kit';
import { Gauge } from '@platform/telemetry';

/**
 * The licensing figures an operator alerts on, as gauges: valid licenses, those expiring within 7 and 30 days,
 * the clusters they license, and the contracts past each quota threshold. Counted by one statement every
 * `intervalMs` (not at every scrape: a scrape must not wait on the database, and several replicas are scraped)
 * and read from memory by the scrape; every replica reports the same figures, so aggregate them with `max`.
 */
const valid = new Gauge('platform_licenses_valid', 'Issued licenses neither revoked nor expired.');
const expiring = new Gauge('platform_licenses_expiring', 'Valid licenses that expire within the given time (`within`: 7d, 30d).');
const clusters = new Gauge('platform_licensed_clusters', 'Distinct clusters holding a valid license.');
const overQuota = new Gauge(
  'platform_contracts_over_quota_threshold',
  'Contracts whose quota usage has crossed the given percentage of its limit (`threshold`), as recorded when crossed.',
);

interface Figures {
  valid: number;
  expiring7: number;
  expiring30: number;
  clusters: number;
  thresholds: { threshold: number; contracts: number }[];
}

/** Starts counting; the returned function stops it (on shutdown). */
export function startLicenseMetrics(db: Database, log: Logger, intervalMs = 60_000): () => void {
  let figures: Figures | undefined;
  const refresh = async () => {
    try {
      const [row] = (
        await db.knex.raw(
          `select
           count(*) filter (where live) as valid,
           count(*) filter (where live and not_after < now() + interval '7 days') as expiring7,
           count(*) filter (where live and not_after < now() + interval '30 days') as expiring30,
           count(distinct cluster_uid) filter (where live) as clusters,
           (select coalesce(json_agg(json_build_object('threshold', threshold, 'contracts', n)), '[]')
              from (select threshold, count(*) as n from ?? group by threshold) t) as thresholds
         from (select *, revoked_at is null and not_after > now() as live from ??) l`,
          [`${db.schema}.quota_alerts`, `${db.schema}.issued_licenses`],
        )
      ).rows as Record<string, unknown>[];
      const thresholds = (typeof row.thresholds === 'string' ? JSON.parse(row.thresholds) : row.thresholds) as Figures['thresholds'];
      figures = {
        valid: Number(row.valid),
        expiring7: Number(row.expiring7),
        expiring30: Number(row.expiring30),
        clusters: Number(row.clusters),
        thresholds: thresholds.map((t) => ({ threshold: Number(t.threshold), contracts: Number(t.contracts) })),
      };
    } catch (err) {
      // The figures keep their last value; a database that does not answer shows in its own metrics and readiness.
      log.warn({ err }, 'could not count licenses for the metrics');
    }
  };
  const stops = [
    valid.source((add) => figures && add({}, figures.valid)),
    expiring.source((add) => {
      if (!figures) return;
      add({ within: '7d' }, figures.expiring7);
      add({ within: '30d' }, figures.expiring30);
    }),
    clusters.source((add) => figures && add({}, figures.clusters)),
    overQuota.source((add) => figures?.thresholds.forEach((t) => add({ threshold: String(t.threshold) }, t.contracts))),
  ];
  void refresh();
  const timer = setInterval(() => void refresh(), intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    for (const stop of stops) stop();
  };
}
