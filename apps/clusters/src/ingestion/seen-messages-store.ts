import type { Knex } from 'knex';
import type { Database } from '@platform/db';

/**
 * clusters.agent_seen_messages: the agent messages already applied (docs/agent-protocol.md#idempotency). An
 * id is written in the transaction of its message's effect, so both commit or neither does.
 */
export class SeenMessagesStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): SeenMessagesStore {
    return new SeenMessagesStore(db);
  }

  /** Records a message id; true the first time, false when it was already recorded (a repeat: skip it). */
  async remember(messageId: string, clusterUID: string, kind: string, trx: Knex.Transaction): Promise<boolean> {
    const rows = await this.db
      .table('agent_seen_messages', trx)
      .insert({ message_id: messageId, cluster_uid: clusterUID, kind })
      .onConflict('message_id')
      .ignore()
      .returning('message_id');
    return rows.length > 0;
  }

  /** Drops ids recorded before `before` (retention); returns how many. */
  async forgetBefore(before: Date, trx?: Knex.Transaction): Promise<number> {
    return this.db.table('agent_seen_messages', trx).where('seen_at', '<', before).delete();
  }
}
