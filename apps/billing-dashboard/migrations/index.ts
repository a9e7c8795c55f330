import type { Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { agentReports } from './20261122010000_agent_reports';
import { systemOutages } from './20261123030000_system_outages';
import { usageSampleDays } from './20261123060000_usage_sample_days';
import { usageObjectDays } from './20261124070000_usage_object_days';
import { usageObjectMonths } from './20261124140000_usage_object_months';
import { usageMonthDailyPoints } from './20261125090000_usage_month_daily_points';

/** Every migration of the billing schema, oldest first. */
export const migrations: Migration[] = [
  init,
  agentReports,
  systemOutages,
  usageSampleDays,
  usageObjectDays,
  usageObjectMonths,
  usageMonthDailyPoints,
];
