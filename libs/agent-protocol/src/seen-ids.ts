import { cacheMetrics, sizeOf, type CacheMetrics } from '@platform/telemetry';
import { LRUCache } from 'lru-cache';

/**
 * Which message ids ingestion has applied, so a redelivered or replayed message has the effect of one.
 *
 * The durable form is a table in the consuming service's schema, written in the same transaction as the
 * message's effect (so an effect and its id commit together or not at all):
 *
 * ```sql
 * CREATE TABLE agent_seen_messages (
 *   message_id  uuid        PRIMARY KEY,          -- Envelope.message_id
 *   cluster_uid uuid        NOT NULL,             -- Envelope.cluster_uid
 *   kind        text        NOT NULL,             -- kind token, e.g. 'usage-sample'
 *   seen_at     timestamptz NOT NULL DEFAULT now()
 * );
 * CREATE INDEX agent_seen_messages_seen_at ON agent_seen_messages (seen_at);
 * -- remember: INSERT ... ON CONFLICT (message_id) DO NOTHING RETURNING message_id  (a row back = first time)
 * -- forget:   DELETE FROM agent_seen_messages WHERE seen_at < $1                  (retention)
 * ```
 *
 * Ids are kept for a retention window longer than the longest redelivery (JetStream's max age of the AGENT
 * stream); an older replay is still harmless where the effect itself reconciles (inventory snapshots carry
 * their observation time, samples their interval).
 */
export interface SeenIds {
  /** Records an id; true when it was not recorded before (apply the message), false for a repeat (skip it). */
  remember(messageId: string, meta: { clusterUID: string; kind: string; at?: Date }): Promise<boolean>;
  /**
   * Undoes `remember` after the effect failed, so the redelivery applies it. Not needed where the id is
   * written in the effect's own transaction (a rollback removes it).
   */
  release(messageId: string): Promise<void>;
  /** Drops ids recorded before `before`; returns how many. */
  forgetBefore(before: Date): Promise<number>;
}

/**
 * In-memory SeenIds for the embedded default and tests: ids of this process's life only, bounded by
 * `maxIds` (the oldest go first), which must exceed the ids a redelivery window can hold.
 */
export class InMemorySeenIds implements SeenIds {
  /**
   * Id → when it was recorded. Only `has` and `set` touch it (neither counts as a use), so the least recently
   * used id is the oldest recorded one. The bound is a size of one per id rather than `max`, which would
   * allocate room for all `maxIds` at once.
   */
  private readonly ids: LRUCache<string, number>;
  private readonly metrics: CacheMetrics;

  constructor(maxIds = 1_000_000) {
    if (!Number.isInteger(maxIds) || maxIds < 1) throw new Error('maxIds must be a positive integer');
    this.ids = new LRUCache<string, number>({ maxSize: maxIds, sizeCalculation: () => 1 });
    // A hit is a message seen before (a redelivery).
    this.metrics = cacheMetrics(sizeOf('agent-protocol.seen-ids', this.ids, maxIds));
  }

  async remember(messageId: string, meta: { clusterUID: string; kind: string; at?: Date }): Promise<boolean> {
    if (this.ids.has(messageId)) return (this.metrics.hit.inc(), false);
    this.metrics.miss.inc();
    this.ids.set(messageId, (meta.at ?? new Date()).getTime());
    return true;
  }

  async release(messageId: string): Promise<void> {
    this.ids.delete(messageId);
  }

  async forgetBefore(before: Date): Promise<number> {
    const cut = before.getTime();
    const old = [...this.ids.entries()].filter(([, at]) => at < cut).map(([id]) => id);
    for (const id of old) this.ids.delete(id);
    return old.length;
  }

  /** How many ids are held. */
  get size(): number {
    return this.ids.size;
  }
}
