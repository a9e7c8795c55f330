/**
 * What usage is counted in, in one vocabulary wherever the console names it: the four quantities of the usage reports
 * (docs/usage-reports.md, "Quantities") and the metrics of a contract's quota (docs/contracts.md, "Quota metrics"),
 * which count the same use, by the hour or by the 730-hour month. The API's own names (`cpuCoreHours`,
 * `cpu_core_month`, `cpu-core-hours`) are shown beside these where a person types or reads them.
 */
export const QUANTITY_NAMES = {
  cpuCoreHours: 'CPU core-hours',
  memoryGiBHours: 'Memory GiB-hours',
  storageGiBHours: 'Storage GiB-hours',
  objectHours: 'Object-hours',
} as const;

/**
 * The quota metrics the API takes (libs/proto/src/quota-metrics.ts), each with its name. The generated types do not
 * carry them (the create form's `quota` field is JSON text), so they are listed here.
 */
export const QUOTA_METRICS: readonly (readonly [metric: string, name: string])[] = [
  ['cpu_core_month', 'CPU core-months'],
  ['memory_gib_month', 'Memory GiB-months'],
  ['cpu-core-hours', QUANTITY_NAMES.cpuCoreHours],
  ['memory-gib-hours', QUANTITY_NAMES.memoryGiBHours],
  ['storage-gib-hours', QUANTITY_NAMES.storageGiBHours],
  ['object-hours', QUANTITY_NAMES.objectHours],
];

/** A quota metric's name ("CPU core-months"), or the metric as the API answered it when it is not one of those. */
export const quotaMetricName = (metric: string) => QUOTA_METRICS.find(([m]) => m === metric)?.[1] ?? metric;
