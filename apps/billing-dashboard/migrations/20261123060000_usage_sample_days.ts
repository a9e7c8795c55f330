import type { Knex } from 'knex';
import type { Migration } from '@platform/db';

/**
 * Ingestion now splits usage samples at UTC day boundaries, not only month boundaries, so a daily series (the
 * usage views' `daily`, the PDF summary's chart) puts each row on its day, the same way everywhere. Rows already
 * stored keep their month split: samples from agents are a few hours long and the simulator's never cross a day.
 * Only the table's description changes.
 */
export const usageSampleDays: Migration = {
  name: '20261123060000_usage_sample_days',
  async up(knex: Knex, schema: string) {
    await knex.raw(
      `comment on table ??.usage_samples is 'What one licensed object used over an interval (UsageSample reports), split at UTC day boundaries so every row lies in one day and one month (usage reports)'`,
      [schema],
    );
  },
  async down(knex: Knex, schema: string) {
    await knex.raw(
      `comment on table ??.usage_samples is 'What one licensed object used over an interval (UsageSample reports), split at month boundaries so every row lies in one month (usage reports)'`,
      [schema],
    );
  },
};
