import { cacheMetrics, type CacheMetrics, type CounterChild } from '@platform/telemetry';
import type { TupleCondition } from './conditions';
import type { TupleSource, UsersRead } from './source';
import type { UserRef } from './tuple';
import type { TupleRow } from './tuple-store';

// Postgres text cannot hold NUL, so joining names with it gives one key per combination (as TupleGraph does).
const SEP = '\u0000';

const kindKey = (objectType: string, relation: string, userType: string, userRelation: string) =>
  objectType + SEP + relation + SEP + userType + SEP + userRelation;

/** A user as kept: its id, and its tuple's condition when it has one (type and relation are the key's). */
interface Kept {
  id: string;
  condition?: TupleCondition;
}

/** Whether one user holds a tuple: not (null), without a condition (true), or under this condition. */
type Point = null | true | TupleCondition;

/**
 * One entry per kind of tuple on one object (`kind␀object`): all its users (`users`, what a read of every user
 * found), or only whether some users hold it (`points`: each user id a check named). Its cost is one plus the
 * users or points it holds.
 */
type Entry = { users: Kept[] } | { points: Map<string, Point> };

const costOf = (e: Entry) => 1 + ('users' in e ? e.users.length : e.points.size);

/** Most evictions tracked while table reads are on their way. */
const MAX_TRACKED = 10_000;

/** An entry costing more than this share of the bound is answered but not kept: it would push out many others. */
const LARGEST_SHARE = 16;

/**
 * The tuples checks read from the table, kept in a bounded cache (least recently used first out) while the tuples
 * are too many to hold all in memory (MemoryTuples' table mode).
 *
 * It is kept correct as the whole tuples in memory are: MemoryTuples replays the table's change log into it before a
 * check, and each change evicts what it names (the entry of its kind of tuple on its object). A read from the table
 * that was on its way while a change to what it read was applied is answered but not kept (its snapshot may predate
 * the change).
 */
export class TupleCache {
  /** Its name in /metrics (`cache_entries{cache}`, `cache_max_entries`, `cache_lookups_total`, `cache_evictions_total`). */
  readonly name = 'authz.tuples';
  private readonly entries = new Map<string, Entry>();
  /** Tuples held: the sum of the entries' costs. */
  private cost = 0;
  /** Numbers the evictions, so a read knows whether one happened while it was on its way. */
  private version = 0;
  /** What reads that started before this version found is not kept (a clear, or too many evictions to track). */
  private keptFrom = 0;
  /** Reads on their way to the table, and while any is: the version of each key's last eviction. */
  private reading = 0;
  private readonly evictedAt = new Map<string, number>();
  private readonly metrics: CacheMetrics;
  private readonly evictedByChange: CounterChild;
  private readonly evictedBySize: CounterChild;
  private closed = false;

  constructor(
    private readonly table: TupleSource,
    readonly maxTuples: number,
  ) {
    this.metrics = cacheMetrics(this);
    this.evictedByChange = this.metrics.evicted('change');
    this.evictedBySize = this.metrics.evicted('size');
  }

  /** The bound reported in /metrics: none once closed (a cache left behind by a change of mode). */
  get maxEntries(): number {
    return this.closed ? 0 : this.maxTuples;
  }

  /** Tuples held now (at most `maxTuples`). */
  get size(): number {
    return this.cost;
  }

  /** Entries held now. */
  get entryCount(): number {
    return this.entries.size;
  }

  /** Forgets what a logged change names: the entry of its kind of tuple on its object. */
  evict(row: TupleRow): void {
    const key = kindKey(row.object_type, row.relation, row.user_type, row.user_relation) + SEP + row.object_id;
    this.version++;
    if (this.drop(key)) this.evictedByChange.inc();
    if (!this.reading) return;
    // Reads are on their way as long as checks keep coming: past a bound, none of those on their way is kept.
    if (this.evictedAt.size >= MAX_TRACKED) {
      this.keptFrom = this.version;
      this.evictedAt.clear();
    } else this.evictedAt.set(key, this.version);
  }

  /** Forgets everything (a truncate, or a change of mode). */
  clear(): void {
    this.version++;
    this.keptFrom = this.version;
    this.entries.clear();
    this.cost = 0;
  }

  /** Stops reporting to /metrics (the engine is closed, or left table mode). */
  close(): void {
    this.clear();
    this.closed = true;
  }

  async readUsers(reads: UsersRead[]): Promise<Map<string, UserRef[]>[]> {
    const found = reads.map(() => new Map<string, UserRef[]>());
    const misses: Miss[] = [];
    reads.forEach((read, r) => {
      for (const shape of read.shapes) {
        if (shape.ids?.length === 0) continue;
        const kind = kindKey(read.objectType, read.relation, shape.type, shape.relation);
        const miss: Miss = { r, type: shape.type, relation: shape.relation, kind, objectIds: [], points: new Set() };
        const ids = new Set<string>();
        for (const objectId of read.objectIds) {
          const entry = this.get(kind + SEP + objectId);
          if (entry && 'users' in entry) {
            this.metrics.hit.inc();
            const users = shape.ids ? entry.users.filter((u) => shape.ids!.includes(u.id)) : entry.users;
            this.answer(found[r], read, shape.type, shape.relation, objectId, users);
            continue;
          }
          if (!shape.ids) {
            this.metrics.miss.inc();
            miss.objectIds.push(objectId);
            continue;
          }
          let missed = false;
          for (const id of shape.ids) {
            const point = entry?.points.get(id);
            if (point !== undefined) {
              this.metrics.hit.inc();
              if (point) this.answer(found[r], read, shape.type, shape.relation, objectId, [kept(id, point)]);
            } else {
              this.metrics.miss.inc();
              ids.add(id);
              miss.points.add(objectId + SEP + id);
              missed = true;
            }
          }
          if (missed) miss.objectIds.push(objectId);
        }
        if (miss.objectIds.length) misses.push(shape.ids ? { ...miss, ids } : miss);
      }
    });
    if (misses.length === 0) return found;

    // Conditions are kept whatever the read asks: a read `withoutConditions` leaves them out when answering.
    const asked: UsersRead[] = misses.map((m) => ({
      objectType: reads[m.r].objectType,
      objectIds: m.objectIds,
      relation: reads[m.r].relation,
      shapes: [{ type: m.type, relation: m.relation, ...(m.ids && { ids: [...m.ids] }) }],
    }));
    const started = this.version;
    this.reading++;
    try {
      const answered = await this.table.readUsers(asked);
      misses.forEach((m, i) => {
        const read = reads[m.r];
        for (const objectId of m.objectIds) {
          const users: Kept[] = (answered[i].get(objectId) ?? []).map((u) =>
            u.condition ? { id: u.id, condition: u.condition } : { id: u.id },
          );
          if (!m.ids) {
            this.answer(found[m.r], read, m.type, m.relation, objectId, users);
            this.keepUsers(m.kind + SEP + objectId, users, started);
            continue;
          }
          // Only the points that missed: the others were answered from the cache already.
          const points = new Map<string, Point>();
          for (const id of m.ids) {
            if (!m.points.has(objectId + SEP + id)) continue;
            const user = users.find((u) => u.id === id);
            if (user) this.answer(found[m.r], read, m.type, m.relation, objectId, [user]);
            points.set(id, user ? (user.condition ?? true) : null);
          }
          this.keepPoints(m.kind + SEP + objectId, points, started);
        }
      });
    } finally {
      if (--this.reading === 0) this.evictedAt.clear();
    }
    return found;
  }

  /** Reverse lookups are not cached: the table's second index answers them. */
  readObjectIds(objectType: string, relation: string, users: UserRef[]): Promise<string[]> {
    return this.table.readObjectIds(objectType, relation, users);
  }

  private answer(found: Map<string, UserRef[]>, read: UsersRead, type: string, relation: string, objectId: string, users: Kept[]): void {
    for (const u of users) {
      if (u.condition && read.withoutConditions) continue;
      const user: UserRef = u.condition ? { type, id: u.id, relation, condition: u.condition } : { type, id: u.id, relation };
      const list = found.get(objectId);
      if (list) list.push(user);
      else found.set(objectId, [user]);
    }
  }

  /** The entry, marked as the most recently used. */
  private get(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  /** Whether what a read that started at `started` found for `key` may be kept: no change to it was applied since. */
  private current(key: string, started: number): boolean {
    return this.keptFrom <= started && (this.evictedAt.get(key) ?? 0) <= started;
  }

  /** Keeps all users of an entry, in place of what was kept of it. */
  private keepUsers(key: string, users: Kept[], started: number): void {
    const entry: Entry = { users };
    if (costOf(entry) > this.largest() || !this.current(key, started)) return;
    this.drop(key);
    this.makeRoom(costOf(entry));
    this.entries.set(key, entry);
    this.cost += costOf(entry);
  }

  /** Adds points to an entry (to a new one when none is kept); its oldest points go past the largest entry. */
  private keepPoints(key: string, points: Map<string, Point>, started: number): void {
    if (!this.current(key, started) || this.largest() < 2) return;
    let entry = this.entries.get(key);
    if (entry && 'users' in entry) return; // kept whole meanwhile, by a read as fresh
    if (!entry) {
      entry = { points: new Map() };
      this.makeRoom(1);
      this.entries.set(key, entry);
      this.cost += 1;
    }
    for (const [id, point] of points) {
      if (!entry.points.has(id)) {
        if (costOf(entry) >= this.largest()) {
          entry.points.delete(entry.points.keys().next().value as string);
          this.cost--;
          this.evictedBySize.inc();
        }
        this.makeRoom(1, key);
        this.cost++;
      }
      entry.points.set(id, point);
    }
  }

  /** The largest cost an entry may have (a small bound, as in tests, still keeps small entries). */
  private largest(): number {
    return Math.max(this.maxTuples / LARGEST_SHARE, Math.min(this.maxTuples, 8));
  }

  /** Drops the least recently used entries (never `keep`) until `cost` more fits. */
  private makeRoom(cost: number, keep?: string): void {
    while (this.cost + cost > this.maxTuples) {
      let oldest = this.entries.keys().next().value as string | undefined;
      if (oldest === undefined) return;
      if (oldest === keep) {
        // The entry being added to is the only one left, or the oldest: move it to the end and drop the next one.
        const entry = this.entries.get(keep)!;
        this.entries.delete(keep);
        this.entries.set(keep, entry);
        oldest = this.entries.keys().next().value as string;
        if (oldest === keep) return;
      }
      this.drop(oldest);
      this.evictedBySize.inc();
    }
  }

  /** Removes an entry; whether there was one. */
  private drop(key: string): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    this.entries.delete(key);
    this.cost -= costOf(entry);
    return true;
  }
}

const kept = (id: string, point: true | TupleCondition): Kept => (point === true ? { id } : { id, condition: point });

/** What a read found missing for one shape: which objects to read, and for a shape naming users, which points. */
interface Miss {
  r: number;
  type: string;
  relation: string;
  kind: string;
  objectIds: string[];
  /** The user ids asked, for a shape naming them; undefined for a family. */
  ids?: Set<string>;
  /** `object␀user` of the points that missed. */
  points: Set<string>;
}
