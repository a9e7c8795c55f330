import type { Knex } from 'knex';
import { LeaseQueue, pageOf, type Database, type EffectHandler, type Outbox, type PageLimits } from '@platform/db';
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
const MAX_BACKOFF_MS = 3_600_000;
/**
 * The delivery log and the mail list answer the newest N, the first page of a list newest first: 50 unless asked, at
 * most 200, a limit outside moved to the nearer end. Clamped here once; the webhook list is handed the clamped N.
 */
const NEWEST: PageLimits = { defaultLimit: 50, maxLimit: 200 };
/**
 * Mails taken for one round of attempts, all attempted at once (each on its own connection, few enough for any mail
 * server's limit per client), and how long they belong to it: an attempt takes at most SMTP_TIMEOUT_MS (up to 120 s),
 * so a lease outlasts a whole round.
 */
const MAILS_PER_CLAIM = 4;
const MAIL_LEASE_MS = 180_000;

interface MailRow {
  id: string | number;
  notice_id: string | number | null;
  recipient: string;
  subject: string;
  text: string;
  html: string;
  attempts: number;
}

/**
 * Contract notices (docs/notifications.md): a sweep checks every running contract with a quota against what its
 * clusters reported, and every contract against its end. Each threshold (and each of 30, 7 and 1 days before the
 * end) is decided once per contract period: the decision is a `notices` row with a unique key, committed with an
 * outbox entry that sends it, so a crash between deciding and sending leaves the send to the relay, and another
 * sweep or a redelivered report finds the row and decides nothing. Sending queues, in one transaction, a delivery per
 * recipient's mail (a `notice_mails` row under a key of its own) and per webhook endpoint, so a redelivered send
 * queues nothing twice; each delivery is then attempted and retried on its own (the same LeaseQueue backoff for
 * both channels), so a mail server that is down holds up no webhook, and no recipient another.
 */
export class Notices {
  private outbox?: Outbox;
  private timer?: NodeJS.Timeout;
  private mailTimer?: NodeJS.Timeout;
  private sweeping?: Promise<number>;
  /** The mail pass in progress, and whether another was asked for meanwhile (a mail queued after its last claim). */
  private mailing?: Promise<void>;
  private mailAgain = false;
  /** The readers being told of mails' new states, and whether more changed meanwhile. */
  private telling?: Promise<void>;
  private tellAgain = false;
  private changed: () => Promise<void> = async () => {};
  /** The notice mails as work rows: taken for an attempt, retried after doubling waits, as the webhook deliveries are. */
  private readonly mailQueue: LeaseQueue;

  constructor(
    private readonly db: Database,
    private readonly store: ContractsStore,
    private readonly inventory: Inventory,
    private readonly usage: UsageSource,
    private readonly mailer: Mailer,
    private readonly webhooks: Webhooks,
    private readonly log: Logger,
  ) {
    this.mailQueue = new LeaseQueue(db, {
      table: 'notice_mails',
      dueAt: 'next_attempt_at',
      leaseMs: MAIL_LEASE_MS,
      backoff: { baseMs: webhooks.settings.WEBHOOK_RETRY_BASE_MS, maxMs: MAX_BACKOFF_MS },
    });
  }

  /** The outbox effect that sends a decided notice; idempotent. */
  effects(): Record<string, EffectHandler<{ noticeId: number }>> {
    return { [SEND]: { apply: ({ noticeId }) => this.send(noticeId) } };
  }

  useOutbox(outbox: Outbox): void {
    this.outbox = outbox;
  }

  /**
   * Sweeps now and then every `intervalMs`, and attempts the mails due as often as the webhook deliveries are; `changed`
   * tells the readers after a sweep that decided notices and after each mail attempt is recorded.
   */
  start(intervalMs: number, changed: () => Promise<void> = async () => {}): void {
    this.changed = changed;
    this.mailTimer = setInterval(() => this.kickMails(), Math.min(this.webhooks.settings.WEBHOOK_RETRY_BASE_MS, 1_000));
    this.mailTimer.unref();
    this.kickMails();
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
    clearInterval(this.mailTimer);
    this.mailTimer = undefined;
    await this.sweeping?.catch(() => undefined);
    this.mailAgain = false;
    await this.mailing;
    this.tellAgain = false;
    await this.telling;
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

  /**
   * Sends a decided notice: queues, in one transaction, each recipient's mail (once: its key is the notice and the
   * address) and the deliveries to the webhook endpoints hearing about it (once per endpoint), then starts both
   * channels' passes. Nothing here waits on a mail server or an endpoint, so a redelivered or retried send has the
   * effect of one and neither channel waits for the other.
   */
  async send(noticeId: number): Promise<void> {
    const row = await this.db.table('notices').where({ id: noticeId }).first();
    if (!row) return;
    const detail: NoticeDetail = typeof row.detail === 'string' ? JSON.parse(row.detail) : row.detail;
    const kind = row.kind as EventKind;
    const { recipients: _recipients, ...data } = detail;
    const body = JSON.stringify({ id: `notice_${noticeId}`, type: kind, created: SECONDS(row.created_at), data });
    const { mails, hooks } = await this.db.transaction(async (trx) => ({
      mails: await this.queueMails(
        detail.recipients.map((to) => ({ mail: noticeMail(kind, detail, to), dedupeKey: `notice:${noticeId}:${to}` })),
        detail.ownerId,
        noticeId,
        trx,
      ),
      hooks: await this.webhooks.enqueue(noticeId, detail.ownerId, kind, body, trx),
    }));
    if (hooks > 0) this.webhooks.kick();
    if (mails > 0) this.kickMails();
  }

  /** Queues mails as pending deliveries, each unless one with its key is already recorded; answers how many were new. */
  private async queueMails(
    mails: { mail: Mail; dedupeKey: string }[],
    ownerId: number,
    noticeId: number | null,
    trx: Knex.Transaction,
  ): Promise<number> {
    if (mails.length === 0) return 0;
    const rows = mails.map(({ mail, dedupeKey }) => ({
      notice_id: noticeId,
      owner_id: ownerId,
      recipient: mail.to,
      subject: mail.subject,
      status: 'pending',
      text: mail.text,
      html: mail.html,
      dedupe_key: dedupeKey,
    }));
    const added = await this.db.table('notice_mails', trx).insert(rows).onConflict('dedupe_key').ignore().returning('id');
    return added.length;
  }

  /** Runs a mail pass now; one running runs once more when it ends, so a mail queued meanwhile is not left for the timer. */
  kickMails(): void {
    if (this.mailing) {
      this.mailAgain = true;
      return;
    }
    this.mailAgain = false;
    this.mailing = this.mailPass()
      .then(
        () => undefined,
        (err: unknown) => this.log.error({ err }, 'notice mail pass failed'),
      )
      .finally(() => {
        this.mailing = undefined;
        if (this.mailAgain) this.kickMails();
      });
  }

  /** Waits until no mail pass runs and the readers were told of every attempt (tests). */
  async mailsIdle(): Promise<void> {
    while (this.mailing || this.telling) await (this.mailing ?? this.telling);
  }

  /** Tells the readers at once that a mail's line changed; one told meanwhile is told once more after the one running. */
  private tell(): void {
    if (this.telling) {
      this.tellAgain = true;
      return;
    }
    this.tellAgain = false;
    this.telling = this.changed()
      .catch((err) => this.log.warn({ err }, 'could not tell the readers of a notice mail attempt'))
      .finally(() => {
        this.telling = undefined;
        if (this.tellAgain) this.tell();
      });
  }

  /** Attempts every due mail once, those of a claim at the same time; answers how many it attempted. */
  async mailPass(): Promise<number> {
    let attempted = 0;
    for (;;) {
      const due = await this.db.transaction((trx) =>
        this.mailQueue.take<MailRow>(
          trx,
          this.db
            .table('notice_mails', trx)
            .where('status', 'pending')
            .andWhere('next_attempt_at', '<=', new Date())
            .orderBy('id')
            .limit(MAILS_PER_CLAIM)
            .select('id', 'notice_id', 'recipient', 'subject', 'text', 'html', 'attempts'),
        ),
      );
      if (due.length === 0) return attempted;
      // Every attempt of the claim ends before the pass does, even when recording one of them failed.
      const failed = (await Promise.allSettled(due.map((m) => this.attemptMail(m)))).find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      attempted += due.length;
    }
  }

  /**
   * One attempt of one mail: sent (or kept) ends it; a failure is noted with its error and retried after the backoff,
   * until given up. Either way the delivery log shows it as soon as it is recorded, not when the pass ends.
   */
  private async attemptMail(m: MailRow): Promise<void> {
    await this.recordAttempt(m);
    this.tell();
  }

  private async recordAttempt(m: MailRow): Promise<void> {
    const attempts = m.attempts + 1;
    let status: 'sent' | 'kept';
    try {
      status = await this.mailer.send({ to: m.recipient, subject: m.subject, text: m.text, html: m.html });
    } catch (err) {
      // The server's answer only: never the mail's body, and the mailer keeps SMTP credentials out of its errors.
      const error = ((err as Error).message || String(err)).slice(0, 500);
      const giveUp = attempts >= this.webhooks.settings.WEBHOOK_MAX_ATTEMPTS;
      await this.mailQueue.failed({ id: m.id }, attempts, {
        status: giveUp ? 'failed' : 'pending',
        last_error: error,
        updated_at: new Date(),
      });
      const about = { mail: Number(m.id), notice: m.notice_id === null ? undefined : Number(m.notice_id), attempts, error };
      if (giveUp) this.log.error(about, 'gave up a notice mail: the mail server kept failing');
      else this.log.warn(about, 'could not send a notice mail; it is retried');
      return;
    }
    await this.mailQueue
      .held({ id: m.id })
      .update({ status, attempts, last_error: '', updated_at: new Date(), next_attempt_at: new Date() });
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
        attempts: 1,
        text: mail.text,
        html: mail.html,
        dedupe_key: dedupeKey,
      })
      .onConflict('dedupe_key')
      .ignore();
  }

  /**
   * The delivery log of an owner (0: all), newest first: its endpoints' webhook deliveries and its contracts' notice
   * mails, one line per endpoint or recipient (no mail's body).
   */
  async deliveries(ownerId: number, limit: number): Promise<notificationsV1.WebhookDelivery[]> {
    const { limit: n } = pageOf({ limit }, NEWEST);
    const q = this.db
      .table('notice_mails as m')
      .join('notices as n', 'n.id', 'm.notice_id')
      .select('m.id', 'm.recipient', 'm.status', 'm.attempts', 'm.last_error', 'm.created_at', 'm.updated_at', 'm.next_attempt_at')
      .select('n.contract_id', 'n.kind')
      .orderBy('m.id', 'desc')
      .limit(n);
    if (ownerId) q.where('m.owner_id', ownerId);
    const mails: notificationsV1.WebhookDelivery[] = (await q).map((r: any) => ({
      id: Number(r.id),
      channel: 'mail',
      recipient: r.recipient,
      endpointId: 0,
      url: '',
      event: r.kind,
      status: r.status === 'sent' || r.status === 'kept' ? 'delivered' : r.status,
      attempts: r.attempts,
      responseCode: 0,
      lastError: r.last_error,
      contractId: Number(r.contract_id),
      createdUnix: SECONDS(r.created_at),
      updatedUnix: SECONDS(r.updated_at),
      nextAttemptUnix: SECONDS(r.next_attempt_at),
    }));
    const hooks = await this.webhooks.deliveries(ownerId, n);
    // Each list is newest first; merged by when each line was made (a webhook line first within a second).
    return [...hooks, ...mails].sort((a, b) => b.createdUnix - a.createdUnix).slice(0, n);
  }

  /** The mails notices sent or kept, newest first (owner 0: all); those not sent yet, or given up, are in the delivery log. */
  async mails(ownerId: number, limit: number): Promise<notificationsV1.NoticeMail[]> {
    const { limit: n } = pageOf({ limit }, NEWEST);
    const q = this.db
      .table('notice_mails as m')
      .leftJoin('notices as n', 'n.id', 'm.notice_id')
      .whereIn('m.status', ['sent', 'kept'])
      .select('m.*', 'n.contract_id')
      .orderBy('m.id', 'desc')
      .limit(n);
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
