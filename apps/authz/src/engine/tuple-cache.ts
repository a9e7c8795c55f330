import { Counter, Gauge } from '@platform/telemetry';
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

/**
 * One entry per what a check reads: all users of one kind on one object (a "family": `kind␀object`), or whether
 * one user holds it (a "point": `kind␀object␀user`, the read of a check naming its user). Its cost is one plus
 * the users it holds.
 */
type Entry = Kept[];

/** An entry costing more than this share of the bound is answered but not kept: it would push out many others. */
const LARGEST_SHARE = 16;

const lookups = new Counter(
  'authz_tuple_cache_lookups_total',
  "Lookups of authz's cache of tuples read from the table (table mode, past AUTHZ_MEMORY_TUPLES_MAX), by result (hit, miss).",
  ['result'],
);
const HIT = lookups.child('hit');
const MISS = lookups.child('miss');
/** The caches open in this process (one per engine in table mode: one in a served authz). */
const open = new Set<TupleCache>();
new Gauge('authz_tuple_cache_tuples', "Tuples held by authz's cache of tuples read from the table (table mode).").source((add) =>
  add({}, [...open].reduce((n, c) => n + c.size, 0)),
);
new Gauge('authz_tuple_cache_max_tuples', "Most tuples authz's cache of tuples read from the table holds (AUTHZ_TUPLE_CACHE_MAX).").source(
  (add) => add({}, [...open].reduce((n, c) => n + c.maxTuples, 0)),
);

/**
 * The tuples checks read from the table, kept in a bounded cache (least recently used first out) while the tuples
 * are too many to hold all in memory (MemoryTuples' table mode).
 *
 * It is kept correct as the whole tuples in memory are: MemoryTuples replays the table's change log into it before a
 * check, and each change evicts what it names (its family and its point). A read from the table that was on its way
 * while a change to what it read was applied is answered but not kept (its snapshot may predate the change).
 */
export class TupleCache {
  private readonly entries = new Map<string, Entry>();
  /** Tuples held: the sum of the entries' costs. */
  private cost = 0;
  /** Numbers the evictions, so a read knows whether one happened while it was on its way. */
  private version = 0;
  private clearedAt = 0;
  /** Reads on their way to the table, and while any is: the version of each key's last eviction. */
  private reading = 0;
  private readonly evictedAt = new Map<string, number>();

  constructor(
    private readonly table: TupleSource,
    readonly maxTuples: number,
  ) {
    open.add(this);
  }

  /** Tuples held now (at most `maxTuples`). */
  get size(): number {
    return this.cost;
  }

  /** Entries held now. */
  get entryCount(): number {
    return this.entries.size;
  }

  /** Forgets what a logged change names: the family of its object and kind, and its point. */
  evict(row: TupleRow): void {
    const family = kindKey(row.object_type, row.relation, row.user_type, row.user_relation) + SEP + row.object_id;
    this.version++;
    for (const key of [family, family + SEP + row.user_id]) {
      this.drop(key);
      if (this.reading) this.evictedAt.set(key, this.version);
    }
  }

  /** Forgets everything (a truncate, or a change of mode). */
  clear(): void {
    this.version++;
    this.clearedAt = this.version;
    this.entries.clear();
    this.cost = 0;
  }

  /** Stops reporting to /metrics (the engine is closed, or left table mode). */
  close(): void {
    this.clear();
    open.delete(this);
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
          const family = this.get(kind + SEP + objectId);
          if (family) {
            HIT.inc();
            this.answer(found[r], read, shape.type, shape.relation, objectId, shape.ids ? family.filter((u) => shape.ids!.includes(u.id)) : family);
            continue;
          }
          if (!shape.ids) {
            MISS.inc();
            miss.objectIds.push(objectId);
            continue;
          }
          let missed = false;
          for (const id of shape.ids) {
            const point = this.get(kind + SEP + objectId + SEP + id);
            if (point) {
              HIT.inc();
              this.answer(found[r], read, shape.type, shape.relation, objectId, point);
            } else {
              MISS.inc();
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
          const users: Kept[] = (answered[i].get(objectId) ?? []).map((u) => (u.condition ? { id: u.id, condition: u.condition } : { id: u.id }));
          if (!m.ids) {
            this.answer(found[m.r], read, m.type, m.relation, objectId, users);
            this.keep(m.kind + SEP + objectId, users, started);
            continue;
          }
          // Only the points that missed: the others were answered from the cache already.
          for (const id of m.ids) {
            if (!m.points.has(objectId + SEP + id)) continue;
            const point = users.filter((u) => u.id === id);
            this.answer(found[m.r], read, m.type, m.relation, objectId, point);
            this.keep(m.kind + SEP + objectId + SEP + id, point, started);
          }
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

  /** Keeps what a read found, unless a change to it was applied since the read started; makes room first. */
  private keep(key: string, entry: Entry, started: number): void {
    const cost = 1 + entry.length;
    if (cost > this.maxTuples / LARGEST_SHARE) return;
    if (this.clearedAt > started || (this.evictedAt.get(key) ?? 0) > started) return;
    this.drop(key);
    while (this.cost + cost > this.maxTuples) {
      const oldest = this.entries.keys().next().value as string;
      this.drop(oldest);
    }
    this.entries.set(key, entry);
    this.cost += cost;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.cost -= 1 + entry.length;
  }
}

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
