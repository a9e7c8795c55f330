import type { Knex } from 'knex';

/**
 * The SQL that turns usage samples into billed quantities, written once for every reader (contract quotas,
 * the usage-report views, the PDF summary, namespace billing): a sample counts for the hours it overlaps a
 * period, and a resource counts its measured use, or its request when the sample did not measure it
 * (used = 0). Units: CPU in cores, memory and storage in GiB; multiplied by hours they give core-hours and
 * GiB-hours.
 */

/** Hours of overlap between a sample [start_at, end_at) and the period [start, end), as a SQL expression (>= 0). */
export function overlapHours(knex: Knex, start: Date, end: Date): Knex.Raw {
  return knex.raw('greatest(0, extract(epoch from (least(end_at, ?::timestamptz) - greatest(start_at, ?::timestamptz)))) / 3600.0', [
    end,
    start,
  ]);
}

/** Hours a sample covers (a row of one month lies in its month), as SQL. */
export const SAMPLE_HOURS = 'extract(epoch from (end_at - start_at)) / 3600.0';

/** The quantity of a resource a sample counts, in cores (cpu) or GiB (memory, storage), as SQL. */
export const QUANTITY = {
  cpu: '((case when cpu_used > 0 then cpu_used else cpu_request end) / 1000.0)',
  memory: '((case when memory_used > 0 then memory_used else memory_request end) / 1073741824.0)',
  storage: '((case when storage_used > 0 then storage_used else storage_request end) / 1073741824.0)',
} as const;

/**
 * `sum(hours × quantity)` select expressions for core-hours, GiB-hours of memory and storage, and object-hours,
 * over the given hours expression (`SAMPLE_HOURS` for whole samples, or `overlapHours(...)` for a period).
 */
export function quantitySums(knex: Knex, hours: string): Knex.Raw[] {
  return [
    knex.raw(`coalesce(sum(${hours} * ${QUANTITY.cpu}), 0)::float8 as cpu_core_hours`),
    knex.raw(`coalesce(sum(${hours} * ${QUANTITY.memory}), 0)::float8 as memory_gib_hours`),
    knex.raw(`coalesce(sum(${hours} * ${QUANTITY.storage}), 0)::float8 as storage_gib_hours`),
    knex.raw(`coalesce(sum(${hours}), 0)::float8 as object_hours`),
  ];
}
