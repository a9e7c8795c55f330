import { ConflictError, ValidationError } from '@platform/errors';
import { OutagesStore, type OutageFilter, type OutageRow } from './outages-store';
import type { Database } from '@platform/db';

const HOUR_MS = 3_600_000;

/** What a site admin records (SystemOutageRequest, with the account resolved by the gateway). */
export interface OutageInput {
  /** null: the outage concerns no account. */
  accountId: number | null;
  accountName: string;
  /** '' when none. */
  clusterId: string;
  start: Date;
  end: Date;
  tags: string[];
  comments: string;
  createdBy: string;
}

export interface EntityDuration {
  entity: string;
  entityName: string;
  durationHours: number;
  percentage: number;
}

export interface OutageReport {
  totalOutages: number;
  totalDurationHours: number;
  topTagsPercentage: { tag: string; percentage: number }[];
  topAccountsDuration: EntityDuration[];
  topClustersDuration: EntityDuration[];
}

/** Tags as stored: trimmed, empty ones dropped, each once, in the order given. */
export const normalizeTags = (tags: string[]): string[] => [...new Set(tags.map((t) => t.trim()).filter((t) => t !== ''))];

const hoursOf = (o: OutageRow) => (o.end_at.getTime() - o.start_at.getTime()) / HOUR_MS;
const percent = (part: number, whole: number) => (whole > 0 ? (part / whole) * 100 : 0);

/**
 * The report over some outages (docs/system-outages.md): their number and total hours; for each tag, the share of
 * the outages carrying it; for each account and each cluster, its hours and their share of the total hours.
 * Outages of no account (no cluster) count in the totals but in no account (cluster) line. Sorted biggest first.
 */
export function reportOf(outages: OutageRow[]): OutageReport {
  const total = outages.reduce((sum, o) => sum + hoursOf(o), 0);
  const tagCounts = new Map<string, number>();
  const accounts = new Map<string, { name: string; hours: number }>();
  const clusters = new Map<string, number>();
  for (const o of outages) {
    for (const tag of new Set(o.tags)) tagCounts.set(tag, (tagCounts.get(tag) ?? 0) + 1);
    if (o.account_id !== null) {
      const a = accounts.get(String(o.account_id)) ?? { name: o.account_name, hours: 0 };
      a.hours += hoursOf(o);
      accounts.set(String(o.account_id), a);
    }
    if (o.cluster_id !== '') clusters.set(o.cluster_id, (clusters.get(o.cluster_id) ?? 0) + hoursOf(o));
  }
  const byDuration = (a: EntityDuration, b: EntityDuration) => b.durationHours - a.durationHours || a.entity.localeCompare(b.entity);
  return {
    totalOutages: outages.length,
    totalDurationHours: total,
    topTagsPercentage: [...tagCounts]
      .map(([tag, n]) => ({ tag, percentage: percent(n, outages.length) }))
      .sort((a, b) => b.percentage - a.percentage || a.tag.localeCompare(b.tag)),
    topAccountsDuration: [...accounts]
      .map(([entity, a]) => ({ entity, entityName: a.name, durationHours: a.hours, percentage: percent(a.hours, total) }))
      .sort(byDuration),
    topClustersDuration: [...clusters]
      .map(([entity, hours]) => ({ entity, entityName: entity, durationHours: hours, percentage: percent(hours, total) }))
      .sort(byDuration),
  };
}

/** System outages: recording them without overlaps, the report, the tags. */
export class Outages {
  private readonly store: OutagesStore;
  constructor(db: Database) {
    this.store = OutagesStore.create(db);
  }

  /** Stores an outage: 422 unless it ends after it starts, 409 when it overlaps another of the same account and cluster. */
  async create(input: OutageInput): Promise<OutageRow> {
    const { start, end } = input;
    if (Number.isNaN(start.getTime()) || start.getTime() <= 0)
      throw new ValidationError('start: an RFC3339 date-time is required', [{ field: 'start', description: 'missing' }]);
    if (Number.isNaN(end.getTime()) || end.getTime() <= 0)
      throw new ValidationError('end: an RFC3339 date-time is required', [{ field: 'end', description: 'missing' }]);
    if (end <= start) throw new ValidationError('end must be after start', [{ field: 'end', description: 'must be after start' }]);
    const outage = {
      account_id: input.accountId,
      account_name: input.accountId === null ? '' : input.accountName,
      cluster_id: input.clusterId.trim(),
      start_at: start,
      end_at: end,
      tags: normalizeTags(input.tags),
      comments: input.comments,
      created_by: input.createdBy,
    };
    return this.store.transaction(async (trx) => {
      await this.store.lockPair(outage.account_id, outage.cluster_id, trx);
      const other = await this.store.overlapping(outage, trx);
      if (other)
        throw new ConflictError(
          `the outage overlaps outage ${other.id} (${other.start_at.toISOString()} to ${other.end_at.toISOString()}) of the same account and cluster`,
        );
      return this.store.insert(outage, trx);
    });
  }

  /** The outages matching the filter, newest first, and their report. */
  async report(filter: OutageFilter): Promise<{ report: OutageReport; entries: OutageRow[] }> {
    const entries = await this.store.list({ ...filter, tags: normalizeTags(filter.tags ?? []) });
    return { report: reportOf(entries), entries };
  }

  tags(): Promise<string[]> {
    return this.store.tags();
  }
}
