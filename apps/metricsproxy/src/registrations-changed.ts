import { METRICSPROXY_CHANGED, type Bus } from '@platform/bus';
import { metricsproxyChangedBy } from '@platform/metricsproxy-client';
import type { Logger, WriteCall } from '@platform/service-kit';

/**
 * The notice that a registration this service answered about may have changed (METRICSPROXY_CHANGED), naming the
 * owner's cluster the write was asked for (metricsproxyChangedBy, beside the readers' read model): sent once a write is
 * over, answered or failed, and awaited before the answer, so the bus has it in its order before the caller hears of
 * the change and another gateway's fence proves it handled it. A notice that cannot be sent is logged; a gateway that
 * misses it serves what it kept for at most its ORG_CACHE_TTL_MS.
 */
export function registrationsChangedNotice(bus: Bus, log: Logger): (call: WriteCall) => Promise<void> {
  return (call) =>
    bus.notify(METRICSPROXY_CHANGED, metricsproxyChangedBy(call)).catch((err) => log.warn({ err }, 'could not send a metricsproxy notice'));
}
