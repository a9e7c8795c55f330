/**
 * The values of a contract quota's `metric` (`contractsV1.Quota.metric`): the product's names, which its clients
 * send, and the hour-based names also accepted. Kept beside the generated contracts so the gateway (which lists
 * them in the API document) and contracts-licensing (which checks and computes them,
 * apps/contracts-licensing/src/contracts/catalog.ts) cannot disagree; docs/contracts.md says how each is computed.
 */
export const QUOTA_METRICS = [
  'cpu_core_month',
  'memory_gib_month',
  'cpu-core-hours',
  'memory-gib-hours',
  'storage-gib-hours',
  'object-hours',
] as const;

export type QuotaMetric = (typeof QUOTA_METRICS)[number];

export function isQuotaMetric(name: string): name is QuotaMetric {
  return (QUOTA_METRICS as readonly string[]).includes(name);
}
