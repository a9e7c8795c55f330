import { createHmac, randomBytes } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import { request } from 'node:https';
import { isIP } from 'node:net';
import type { Knex } from 'knex';
import { LeaseQueue, type Database } from '@platform/db';
import { NotFoundError, ValidationError } from '@platform/errors';
import type { notificationsV1 } from '@platform/proto';
import { isGlobalUnicast, nonGlobalReason, type Logger, type SecretBox } from '@platform/service-kit';
import { EVENT_KINDS, endpointDisabledMail } from './messages';
import type { Mail } from './mailer';
import { trustedCas } from './mailer';

export interface WebhookSettings {
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: boolean;
  WEBHOOK_RETRY_BASE_MS: number;
  WEBHOOK_MAX_ATTEMPTS: number;
  WEBHOOK_DISABLE_AFTER_FAILURES: number;
  NOTIFICATIONS_CA_CERT?: string;
}

/** What the webhooks need of the notices: keep or send a mail, and an audit event on a contract. */
export interface WebhookHooks {
  mail(mail: Mail, ownerId: number, dedupeKey: string): Promise<void>;
  audit(contractId: number, event: string, trx: Knex.Transaction): Promise<void>;
  /** After a pass that attempted deliveries (each attempt is logged, an endpoint may be disabled): tells the readers. */
  changed?(): Promise<void>;
}

/** The IP address a URL names as its host (brackets and all spellings undone by the URL parser), or undefined for a name. */
function literalHost(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? host : undefined;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`, as Stripe signs: the timestamp guards against replays. */
export function signature(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

const SECONDS = (d: Date | string) => Math.floor(new Date(d).getTime() / 1000);
const MAX_BACKOFF_MS = 3_600_000;
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How long a delivery being attempted belongs to its attempt before another worker may take it. */
const CLAIM_MS = 60_000;

interface EndpointRow {
  id: string | number;
  owner_id: string | number;
  url: string;
  events: string[];
  secret_sealed: string;
  created_by: string;
  notify_email: string;
  enabled: boolean;
  failures_in_row: number;
  disabled_reason: string;
  created_at: Date;
}

/**
 * Webhook endpoints and their deliveries (docs/notifications.md): registered with a generated secret (shown once,
 * stored sealed), refused when they resolve to an address that is not global unicast (checked again at every
 * connection, so a changed DNS answer does not reach inside), each delivery signed, retried with doubling waits, logged with its
 * status and response code; an endpoint failing WEBHOOK_DISABLE_AFTER_FAILURES attempts in a row is disabled.
 */
export class Webhooks {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** The deliveries as work rows: taken for an attempt, retried after doubling waits. */
  private readonly queue: LeaseQueue;

  constructor(
    private readonly db: Database,
    private readonly secrets: SecretBox,
    /** Also the notice mails' retries (notices.ts): one backoff and one number of attempts for every channel. */
    readonly settings: WebhookSettings,
    private readonly hooks: WebhookHooks,
    private readonly log: Logger,
  ) {
    this.queue = new LeaseQueue(db, {
      table: 'webhook_deliveries',
      dueAt: 'next_attempt_at',
      leaseMs: CLAIM_MS,
      backoff: { baseMs: settings.WEBHOOK_RETRY_BASE_MS, maxMs: MAX_BACKOFF_MS },
    });
  }

  async list(ownerId: number): Promise<notificationsV1.WebhookEndpoint[]> {
    const rows: EndpointRow[] = await this.db.table('webhook_endpoints').where({ owner_id: ownerId }).orderBy('id', 'desc');
    return rows.map(endpointOf);
  }

  async create(req: notificationsV1.CreateWebhookEndpointRequest): Promise<notificationsV1.CreatedWebhookEndpoint> {
    const events = [...new Set(req.events)];
    const unknown = events.filter((e) => !(EVENT_KINDS as readonly string[]).includes(e));
    if (events.length === 0 || unknown.length > 0)
      throw new ValidationError(`events: give one or more of ${EVENT_KINDS.join(', ')}`, [
        { field: 'events', description: 'unknown or missing event kind' },
      ]);
    const url = await this.checkUrl(req.url);
    const secret = `whsec_${randomBytes(24).toString('base64url')}`;
    const [row] = await this.db
      .table('webhook_endpoints')
      .insert({
        owner_id: req.ownerId,
        url,
        events: JSON.stringify(events),
        secret_sealed: this.secrets.seal(secret),
        created_by: req.createdBy,
        notify_email: req.notifyEmail,
      })
      .returning('*');
    return { endpoint: endpointOf(row), secret };
  }

  async setEnabled(req: notificationsV1.SetWebhookEndpointEnabledRequest): Promise<notificationsV1.WebhookEndpoint> {
    const changes = req.enabled
      ? { enabled: true, failures_in_row: 0, disabled_reason: '' }
      : { enabled: false, disabled_reason: 'disabled by its owner' };
    const [row] = await this.db.table('webhook_endpoints').where({ id: req.id, owner_id: req.ownerId }).update(changes).returning('*');
    if (!row) throw new NotFoundError(`no webhook endpoint ${req.id}`);
    if (req.enabled) this.kick();
    return endpointOf(row);
  }

  async delete(ownerId: number, id: number): Promise<void> {
    const n = await this.db.table('webhook_endpoints').where({ id, owner_id: ownerId }).delete();
    if (!n) throw new NotFoundError(`no webhook endpoint ${id}`);
  }

  /** The newest `limit` webhook deliveries of an owner (0: all); `limit` as the delivery log clamped it. */
  async deliveries(ownerId: number, limit: number): Promise<notificationsV1.WebhookDelivery[]> {
    const q = this.db
      .table('webhook_deliveries as d')
      .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .join('notices as n', 'n.id', 'd.notice_id')
      .select('d.*', 'e.url', 'n.contract_id')
      .orderBy('d.id', 'desc')
      .limit(limit);
    if (ownerId) q.where('e.owner_id', ownerId);
    return (await q).map((r: any) => ({
      id: Number(r.id),
      channel: 'webhook',
      recipient: '',
      endpointId: Number(r.endpoint_id),
      url: r.url,
      event: r.event,
      status: r.status,
      attempts: r.attempts,
      responseCode: r.response_code,
      lastError: r.last_error,
      contractId: Number(r.contract_id),
      createdUnix: SECONDS(r.created_at),
      updatedUnix: SECONDS(r.updated_at),
      nextAttemptUnix: SECONDS(r.next_attempt_at),
    }));
  }

  /**
   * Queues a notice's deliveries to the enabled endpoints hearing about it (the site's, and the contract owner's),
   * once per endpoint and notice whatever the number of calls.
   */
  async enqueue(noticeId: number, ownerId: number, event: string, body: string, trx?: Knex.Transaction): Promise<number> {
    const endpoints: EndpointRow[] = await this.db
      .table('webhook_endpoints', trx)
      .where({ enabled: true })
      .whereIn('owner_id', [0, ownerId])
      .whereRaw('events @> ?::jsonb', [JSON.stringify([event])]);
    if (endpoints.length === 0) return 0;
    const rows = endpoints.map((e) => ({ endpoint_id: e.id, notice_id: noticeId, event, body, status: 'pending' }));
    const added = await this.db
      .table('webhook_deliveries', trx)
      .insert(rows)
      .onConflict(['endpoint_id', 'notice_id'])
      .ignore()
      .returning('id');
    return added.length;
  }

  /** Attempts due deliveries every `intervalMs` until stopped. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Runs a pass now unless one is running. */
  kick(): void {
    if (this.running) return;
    this.running = this.pass()
      .then(async (attempted) => {
        if (attempted > 0) await this.hooks.changed?.();
      })
      .catch((err) => this.log.error({ err }, 'webhook delivery pass failed'))
      .finally(() => (this.running = undefined));
  }

  /** Waits for the pass in progress (tests). */
  async idle(): Promise<void> {
    await this.running;
  }

  /** Attempts every due delivery once; answers how many it attempted. */
  async pass(): Promise<number> {
    let attempted = 0;
    for (;;) {
      const due = await this.claim();
      if (due.length === 0) return attempted;
      for (const d of due) await this.attempt(d);
      attempted += due.length;
    }
  }

  /** Takes up to 20 due deliveries of enabled endpoints, moving their next attempt out so no other worker takes them meanwhile. */
  private async claim(): Promise<any[]> {
    return this.db.transaction(async (trx) => {
      const due = this.db
        .table('webhook_deliveries as d', trx)
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .where('d.status', 'pending')
        .andWhere('e.enabled', true)
        .andWhere('d.next_attempt_at', '<=', new Date())
        .orderBy('d.id')
        .limit(20)
        .select(
          'd.id',
          'd.body',
          'd.event',
          'd.attempts',
          'd.notice_id',
          'e.id as endpoint_id',
          'e.url',
          'e.secret_sealed',
          'e.owner_id',
          'e.notify_email',
        );
      return this.queue.take<any>(trx, due);
    });
  }

  private async attempt(d: any): Promise<void> {
    let code = 0;
    let error = '';
    try {
      const secret = this.secrets.open(d.secret_sealed);
      code = await this.post(d.url, d.body, {
        event: d.event,
        delivery: String(d.id),
        signature: signature(secret, d.body, Math.floor(Date.now() / 1000)),
      });
      if (code < 200 || code >= 300) error = `answered ${code}`;
    } catch (err) {
      error = (err as Error).message.slice(0, 500);
    }
    // Every attempt before this one failed (a success ends the deliveries), so the attempts are the failures so far.
    const attempts = d.attempts + 1;
    const ok = !error;
    const giveUp = !ok && attempts >= this.settings.WEBHOOK_MAX_ATTEMPTS;
    const disabledMail = await this.db.transaction(async (trx) => {
      const logged = { attempts, response_code: code, last_error: error, updated_at: new Date() };
      if (ok) {
        await this.queue.held({ id: d.id }, trx).update({ ...logged, status: 'delivered', next_attempt_at: new Date() });
        await this.db.table('webhook_endpoints', trx).where({ id: d.endpoint_id }).update({ failures_in_row: 0 });
        return undefined;
      }
      await this.queue.failed({ id: d.id }, attempts, { ...logged, status: giveUp ? 'failed' : 'pending' }, trx);
      const [e] = await this.db
        .table('webhook_endpoints', trx)
        .where({ id: d.endpoint_id })
        .increment('failures_in_row', 1)
        .returning(['failures_in_row', 'enabled']);
      if (!e?.enabled || e.failures_in_row < this.settings.WEBHOOK_DISABLE_AFTER_FAILURES) return undefined;
      const reason = `${e.failures_in_row} delivery attempts failed in a row, the last: ${error}`;
      await this.db.table('webhook_endpoints', trx).where({ id: d.endpoint_id }).update({ enabled: false, disabled_reason: reason });
      const notice = await this.db.table('notices', trx).where({ id: d.notice_id }).first('contract_id');
      if (notice) await this.hooks.audit(Number(notice.contract_id), `webhook-endpoint-disabled: ${d.url} (${reason})`, trx);
      this.log.warn(
        { endpoint: Number(d.endpoint_id), url: d.url, failures: e.failures_in_row },
        'webhook endpoint disabled: it keeps failing',
      );
      return d.notify_email ? endpointDisabledMail(d.url, reason, d.notify_email) : undefined;
    });
    if (disabledMail)
      await this.hooks
        .mail(disabledMail, Number(d.owner_id), `endpoint-disabled:${d.endpoint_id}:${d.id}`)
        .catch((err) => this.log.warn({ err }, 'could not send the endpoint-disabled mail'));
  }

  /** POSTs the body over HTTPS, connecting only to addresses allowed; answers the status. */
  private post(url: string, body: string, h: { event: string; delivery: string; signature: string }): Promise<number> {
    // A socket connects to an IP host without asking the lookup, so a literal host is judged here: an endpoint stored
    // before the range table last grew is held to it too.
    const literal = literalHost(new URL(url));
    const refused = literal && !this.settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES ? nonGlobalReason(literal) : undefined;
    if (refused) return Promise.reject(new Error(`${refused}, which webhooks may not reach`));
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          timeout: ATTEMPT_TIMEOUT_MS,
          ca: trustedCas(this.settings.NOTIFICATIONS_CA_CERT),
          lookup: this.guardedLookup(),
          headers: {
            'content-type': 'application/json',
            'user-agent': 'platform-notifications',
            'x-platform-event': h.event,
            'x-platform-delivery': h.delivery,
            'x-platform-signature': h.signature,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${ATTEMPT_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  /**
   * A DNS lookup for the connection that keeps only global unicast addresses (unless private ones are allowed), so a
   * rebinding answer cannot reach inside (docs/notifications.md, "Refused URLs").
   */
  private guardedLookup() {
    const allow = this.settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES;
    return (host: string, opts: any, cb: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
      dnsLookup(host, { ...opts, all: true }, (err, addresses: LookupAddress[]) => {
        if (err) return cb(err, []);
        const usable = allow ? addresses : addresses.filter((a) => isGlobalUnicast(a.address));
        if (usable.length === 0) return cb(new Error(`${host} resolves only to addresses that are not global unicast`), []);
        if (opts?.all) return cb(null, usable);
        cb(null, usable[0].address, usable[0].family);
      });
    };
  }

  /** The URL as stored: https only, no credentials, a host that resolves to allowed addresses. */
  private async checkUrl(raw: string): Promise<string> {
    const bad = (why: string) => new ValidationError(`url: ${why}`, [{ field: 'url', description: why }]);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw bad('not a URL');
    }
    if (url.protocol !== 'https:') throw bad('must be https://');
    if (url.username || url.password) throw bad('must not carry credentials');
    if (raw.length > 2048) throw bad('longer than 2048 characters');
    // The URL parser has already read every spelling of an IPv4 host (`2130706433`, `0x7f.1`, `127.1`) as the
    // dotted quad a resolver would use, and an IPv6 host in its hexadecimal form.
    const literal = literalHost(url);
    const addresses = literal
      ? [literal]
      : await dns.lookup(url.hostname, { all: true }).then(
          (a) => a.map((x) => x.address),
          () => [],
        );
    if (addresses.length === 0) throw bad(`${url.hostname} does not resolve`);
    if (this.settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES) return url.toString();
    const refused = addresses.map(nonGlobalReason).find((why) => why !== undefined);
    if (refused)
      throw bad(
        `${literal ? refused : `${url.hostname} resolves to ${refused.replace(/ is /, ', ')}`}: webhooks reach only global unicast (public) addresses`,
      );
    return url.toString();
  }
}

function endpointOf(r: EndpointRow): notificationsV1.WebhookEndpoint {
  return {
    id: Number(r.id),
    ownerId: Number(r.owner_id),
    url: r.url,
    events: typeof r.events === 'string' ? JSON.parse(r.events) : r.events,
    enabled: r.enabled,
    disabledReason: r.disabled_reason,
    failuresInRow: r.failures_in_row,
    createdBy: r.created_by,
    createdUnix: SECONDS(r.created_at),
  };
}
