import type { Knex } from 'knex';
import type { Database, EffectHandler, Outbox } from '@platform/db';
import type { notificationsV1 } from '@platform/proto';
import type { Logger } from '@platform/service-kit';
import type { ContractRow, ContractsStore } from '../contracts/contracts-store';
import type { Inventory } from '../contracts/inventory';
import { quotaUse, type UsageSource } from '../licenses/quota';
import type { Mail, Mailer } from './mailer';
import { noticeMail, type EventKind, type NoticeDetail } from './messages';
import type { Webhooks } from './webhooks';

/** Days before a contract's end its expiry notices go out. */
export const EXPIRY_MARKS = [30, 7, 1];
const DAY_MS = 86_400_000;
/** Who hears about what: quota notices go to the usage-alert lists, expiry notices to the contact and finance. */
const RECIPIENTS: Record<EventKind, string[]> = {
  'quota.threshold': ['usageAlertClient', 'usageAlertAdmin'],
  'contract.expiring': ['contactPerson', 'financeTeam'],
};
const SEND = 'notice.send';
const SECONDS = (d: Date | string) => Math.floor(new Date(d).getTime() / 1000);

/**
 * Contract notices (docs/notifications.md): a sweep checks every running contract with a quota against what its
 * clusters reported, and every contract against its end. Each threshold (and each of 30, 7 and 1 days before the
 * end) is decided once per contract period: the decision is a `notices` row with a unique key, committed with an
 * outbox entry that sends it, so a crash between deciding and sending leaves the send to the relay, and another
 * sweep or a redelivered report finds the row and decides nothing. Sending records each recipient's mail under a
 * key of its own, so a retried send skips who already got it; webhook deliveries are queued once per endpoint.
 */
export class Notices {
  private outbox?: Outbox;
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<number>;

  constructor(
    private readonly db: Database,
    private readonly store: ContractsStore,
    private readonly inventory: Inventory,
    private readonly usage: UsageSource,
    private readonly mailer: Mailer,
    private readonly webhooks: Webhooks,
    private readonly log: Logger,
  ) {}

  /** The outbox effect that sends a decided notice; idempotent. */
  effects(): Record<string, EffectHandler<{ noticeId: number }>> {
    return { [SEND]: { apply: ({ noticeId }) => this.send(noticeId) } };
  }

  useOutbox(outbox: Outbox): void {
    this.outbox = outbox;
  }

  /** Sweeps now and then every `intervalMs`; `changed` tells the readers after a sweep that decided notices. */
  start(intervalMs: number, changed: () => Promise<void> = async () => {}): void {
    const run = () =>
      void this.sweep()
        .then(async (decided) => {
          if (decided > 0) await changed();
        })
        .catch((err) => this.log.error({ err }, 'notice sweep failed'));
    this.timer = setInterval(run, intervalMs);
    this.timer.unref();
    run();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping?.catch(() => undefined);
  }

  /** One sweep (joining one in progress); answers how many notices it decided to send. */
  sweep(now = new Date()): Promise<number> {
    this.sweeping ??= this.sweepOnce(now).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(now: Date): Promise<number> {
    const contracts = await this.store.list({ ownerId: 0, activeOnly: true });
    let decided = 0;
    for (const c of contracts) {
      if (new Date(c.start_at) > now) continue;
      try {
        decided += await this.checkQuota(c, now);
        decided += await this.checkExpiry(c, now);
      } catch (err) {
        // One contract's usage being unavailable (billing down) does not hold up the others; the next sweep retries.
        this.log.warn({ err, contractId: c.id }, 'could not check a contract for notices');
      }
    }
    return decided;
  }

  private async checkQuota(c: ContractRow, now: Date): Promise<number> {
    if (!c.quota.enabled || !(c.quota.alertThresholds ?? []).length) return 0;
    const use = await quotaUse(c, this.store, this.inventory, this.usage);
    if (!use) return 0;
    const percent = (100 * use.used) / use.limit;
    const crossed = (c.quota.alertThresholds ?? []).filter((t) => percent >= t);
    if (!crossed.length) return 0;
    const detail = (threshold: number): NoticeDetail => ({
      ...this.about(c, 'quota.threshold'),
      threshold,
      metric: use.metric,
      used: Math.round(use.used * 100) / 100,
      limit: use.limit,
      disableLicenseOnLimitReached: !!c.quota.disableLicenseOnLimitReached,
    });
    const event = (d: NoticeDetail) =>
      `quota-notice: ${d.threshold}% of ${d.limit} ${d.metric} (used ${d.used!.toFixed(2)}), to ${d.recipients.length} recipient(s)`;
    return this.decide(c, 'quota.threshold', crossed, Math.max(...crossed), detail, event, now);
  }

  private async checkExpiry(c: ContractRow, now: Date): Promise<number> {
    const left = new Date(c.end_at).getTime() - now.getTime();
    const crossed = EXPIRY_MARKS.filter((days) => left <= days * DAY_MS);
    if (left <= 0 || !crossed.length) return 0;
    const detail = (): NoticeDetail => ({ ...this.about(c, 'contract.expiring'), days: Math.ceil(left / DAY_MS) });
    const event = (d: NoticeDetail) => `expiry-notice: ends in ${d.days} day(s), to ${d.recipients.length} recipient(s)`;
    return this.decide(c, 'contract.expiring', crossed, Math.min(...crossed), detail, event, now);
  }

  private about(c: ContractRow, kind: EventKind): Omit<NoticeDetail, 'threshold'> {
    const recipients = [
      ...new Set(
        RECIPIENTS[kind]
          .flatMap((k) => c.emails?.[k] ?? [])
          .map((e) => e.trim().toLowerCase())
          .filter(Boolean),
      ),
    ];
    return {
      contractId: c.id,
      contractName: c.name,
      product: c.product,
      owner: c.owner_login,
      ownerId: c.owner_id,
      endUnix: SECONDS(c.end_at),
      recipients,
    };
  }

  /**
   * Records every mark passed (once per contract period) and sends only the newest one: a contract found at 85%
   * gets the 80% notice, not the 50% one as well.
   */
  private async decide(
    c: ContractRow,
    kind: EventKind,
    marks: number[],
    top: number,
    detailOf: (mark: number) => NoticeDetail,
    eventOf: (d: NoticeDetail) => string,
    now: Date,
  ): Promise<number> {
    if (!this.outbox) throw new Error('notices have no outbox');
    return this.outbox.run(async (trx, stage) => {
      const rows = marks.map((mark) => ({
        contract_id: c.id,
        period_start: c.start_at,
        kind,
        mark,
        sent: mark === top,
        detail: JSON.stringify(detailOf(mark)),
        created_at: now,
      }));
      const fresh: { id: string | number; sent: boolean; detail: NoticeDetail }[] = await this.db
        .table('notices', trx)
        .insert(rows)
        .onConflict(['contract_id', 'period_start', 'kind', 'mark'])
        .ignore()
        .returning(['id', 'sent', 'detail']);
      let sent = 0;
      for (const n of fresh.filter((f) => f.sent)) {
        await this.store.event(c.id, 'notifications', eventOf(typeof n.detail === 'string' ? JSON.parse(n.detail) : n.detail), trx);
        stage(SEND, { noticeId: Number(n.id) });
        sent += 1;
      }
      return sent;
    });
  }

  /** Sends a decided notice: each recipient's mail once, and its webhook deliveries queued. */
  async send(noticeId: number): Promise<void> {
    const row = await this.db.table('notices').where({ id: noticeId }).first();
    if (!row) return;
    const detail: NoticeDetail = typeof row.detail === 'string' ? JSON.parse(row.detail) : row.detail;
    const kind = row.kind as EventKind;
    for (const to of detail.recipients)
      await this.deliverMail(noticeMail(kind, detail, to), detail.ownerId, `notice:${noticeId}:${to}`, noticeId);
    const { recipients: _recipients, ...data } = detail;
    const body = JSON.stringify({ id: `notice_${noticeId}`, type: kind, created: SECONDS(row.created_at), data });
    if ((await this.webhooks.enqueue(noticeId, detail.ownerId, kind, body)) > 0) this.webhooks.kick();
  }

  /** Sends (or keeps) a mail unless the one with this key already went; throws when the server refuses, so it is retried. */
  async deliverMail(mail: Mail, ownerId: number, dedupeKey: string, noticeId: number | null = null, trx?: Knex.Transaction): Promise<void> {
    if (await this.db.table('notice_mails', trx).where({ dedupe_key: dedupeKey }).first('id')) return;
    const status = await this.mailer.send(mail);
    await this.db
      .table('notice_mails', trx)
      .insert({
        notice_id: noticeId,
        owner_id: ownerId,
        recipient: mail.to,
        subject: mail.subject,
        status,
        text: mail.text,
        html: mail.html,
        dedupe_key: dedupeKey,
      })
      .onConflict('dedupe_key')
      .ignore();
  }

  /** The mails notices sent or kept, newest first (owner 0: all). */
  async mails(ownerId: number, limit: number): Promise<notificationsV1.NoticeMail[]> {
    const q = this.db
      .table('notice_mails as m')
      .leftJoin('notices as n', 'n.id', 'm.notice_id')
      .select('m.*', 'n.contract_id')
      .orderBy('m.id', 'desc')
      .limit(Math.min(Math.max(limit || 50, 1), 200));
    if (ownerId) q.where('m.owner_id', ownerId);
    return (await q).map((r: any) => ({
      id: Number(r.id),
      contractId: Number(r.contract_id ?? 0),
      recipient: r.recipient,
      subject: r.subject,
      status: r.status,
      text: r.text,
      html: r.html,
      createdUnix: SECONDS(r.created_at),
    }));
  }
}
