import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Database, EffectHandler, Outbox, StageEffect } from '@platform/db';
import { ConflictError, InputError, NotFoundError, TooManyRequestsError } from '@platform/errors';
import type { orgsTeamsV1 } from '@platform/proto';
import { publicLink, type SecretBox } from '@platform/service-kit';
import { ACCOUNT_TYPE, toUser, type AccountRow } from './identity';
import { hashToken } from './tokens';
import { changed } from '../changes';

/**
 * Verified e-mail addresses (docs/authentication.md, "Verified e-mail addresses"; decision D73): a sign-up's address
 * is trusted — by single sign-on's linking, by a site that lists allowed domains — only once its owner followed the
 * link mailed to it. The link carries a random token (256 bits); only its SHA-256 is kept, with the address it was
 * sent to and its end, one per account: a new mail replaces the old link.
 */

/** The outbox effect that mails a link: handed to contracts-licensing, whose notices send or keep mails. */
export const VERIFICATION_MAIL_EFFECT = 'mail.email-verification';

/** How long a mailed link works. */
export const LINK_LIFETIME_MS = 24 * 3600_000;
/** Where a link leads: the gateway's page that verifies (apps/gateway/src/sections/identity/email-verification.ts). */
export const VERIFY_PATH = '/api/v1/user/email-verification';

/**
 * What the outbox keeps until the mail went: the token sealed with the service's SecretBox (the outbox keeps no
 * secret in the clear), and the key the mail is recorded under so a retry does not mail twice.
 */
interface VerificationMail {
  to: string;
  login: string;
  sealedToken: string;
  dedupeKey: string;
}

/** Sends one mail through contracts-licensing (NotificationsService.SendMail). */
export type SendMail = (mail: { to: string; subject: string; text: string; html: string; dedupeKey: string }) => Promise<void>;

const escapeHtml = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The mail of a link, plain text and HTML. */
export function verificationMail(login: string, link: string, to: string) {
  const hours = LINK_LIFETIME_MS / 3600_000;
  return {
    to,
    subject: 'Verify your e-mail address',
    text:
      `Hello ${login},\n\nplease verify that ${to} is your e-mail address by opening this link within ${hours} hours:\n\n${link}\n\n` +
      `If you did not sign up, ignore this mail: the address stays unverified.\n`,
    html:
      `<p>Hello ${escapeHtml(login)},</p><p>please verify that ${escapeHtml(to)} is your e-mail address by opening this link within ${hours} hours:</p>` +
      `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p><p>If you did not sign up, ignore this mail: the address stays unverified.</p>`,
  };
}

/**
 * The outbox handler mailing a link, built on the platform's public URL (PUBLIC_URL), never on a request's Host: a
 * request naming another host must not have a person's link point there.
 */
export function verificationMailEffects(secrets: SecretBox, publicUrl: string, send: SendMail): Record<string, EffectHandler> {
  const mail: EffectHandler<VerificationMail> = {
    apply: async (m) => {
      const token = secrets.open(m.sealedToken);
      // `code`, not `token`: the gateway reads `?token=` as an access token.
      const link = publicLink(publicUrl, `${VERIFY_PATH}?code=${encodeURIComponent(token)}`);
      await send({ ...verificationMail(m.login, link, m.to), dedupeKey: m.dedupeKey });
    },
  };
  return { [VERIFICATION_MAIL_EFFECT]: mail };
}

export class EmailVerification {
  constructor(
    private readonly db: Database,
    readonly outbox: Outbox,
    private readonly secrets: SecretBox,
    /** A new mail is sent at most this often per account (VERIFICATION_MAIL_INTERVAL): its owner is not flooded. */
    private readonly resendIntervalMs = 60_000,
  ) {}

  /**
   * Within the caller's transaction: a new link for the account's current address (replacing any earlier one) and
   * its mail, staged to go once the change commits.
   */
  async stage(trx: Knex.Transaction, stage: StageEffect, user: { id: number; login: string; email: string }): Promise<void> {
    const token = randomBytes(32).toString('base64url');
    const tokenHash = hashToken(token);
    await this.db
      .table('email_verifications', trx)
      .insert({
        uid: user.id,
        token_hash: tokenHash,
        email: user.email,
        expires_at: new Date(Date.now() + LINK_LIFETIME_MS),
        created_at: new Date(),
      })
      .onConflict('uid')
      .merge();
    stage(VERIFICATION_MAIL_EFFECT, {
      to: user.email,
      login: user.login,
      sealedToken: this.secrets.seal(token),
      // Names the link, not the token: the key is listed with the kept mails.
      dedupeKey: `email-verification:${user.id}:${tokenHash.slice(0, 16)}`,
    } satisfies VerificationMail);
  }

  /**
   * A new mail for an account (its owner, or a site admin, asked): 409 when the address is verified already, 429
   * within the resend interval of the last one.
   */
  async resend(userId: number): Promise<void> {
    await this.outbox.run(
      async (trx, stage) => {
        const user = await this.db.table<AccountRow>('accounts', trx).where({ id: userId, type: ACCOUNT_TYPE.user }).forUpdate().first();
        if (!user) throw new NotFoundError('no such user');
        if (user.email_verified) throw new ConflictError('the e-mail address is verified already');
        await this.assertNotTooSoon(trx, userId);
        await this.stage(trx, stage, user);
      },
      { detach: true },
    );
  }

  /**
   * A new mail for a person who cannot sign in yet, by login or address: the same answer whatever it names, so it
   * tells nobody which accounts exist or which are verified; a mail goes only to an unverified user's own address.
   */
  async resendByLogin(login: string): Promise<void> {
    const key = login.trim().toLowerCase();
    if (!key) throw new InputError('name a login or an e-mail address');
    const user = await this.db
      .table<AccountRow>('accounts')
      .where({ type: ACCOUNT_TYPE.user, email_verified: false })
      .andWhere((q) => q.where({ lower_login: key }).orWhere({ lower_email: key }))
      .first('id');
    if (!user) return;
    await this.resend(user.id).catch((err: unknown) => {
      // Too soon, or verified meanwhile: still the same answer.
      if (!(err instanceof TooManyRequestsError || err instanceof ConflictError)) throw err;
    });
  }

  private async assertNotTooSoon(trx: Knex.Transaction, userId: number): Promise<void> {
    const last = await this.db.table('email_verifications', trx).where({ uid: userId }).first('created_at');
    if (!last) return;
    const wait = new Date(last.created_at).getTime() + this.resendIntervalMs - Date.now();
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new TooManyRequestsError(`a verification mail was sent a moment ago; try again in ${seconds} s`, seconds);
    }
  }

  /**
   * Follows a link: the address it was sent to is verified, once. 422 (the same for each, so a token tells nothing)
   * for one unknown, replaced, used, expired, or sent to an address the account no longer has.
   */
  async verify(token: string): Promise<orgsTeamsV1.User> {
    const invalid = () => new InputError('this verification link is not valid any more: ask for a new mail');
    if (!token || token.length > 200) throw invalid();
    return this.db
      .transaction(async (trx) => {
        // Looked up by the token's hash: a presented token is never compared byte by byte with a stored secret.
        const pending = await this.db
          .table('email_verifications', trx)
          .where({ token_hash: hashToken(token) })
          .forUpdate()
          .first();
        if (!pending) throw invalid();
        await this.db.table('email_verifications', trx).where({ uid: pending.uid }).delete();
        const user = await this.db.table<AccountRow>('accounts', trx).where({ id: pending.uid }).forUpdate().first();
        if (!user || new Date(pending.expires_at).getTime() <= Date.now() || user.lower_email !== String(pending.email).toLowerCase()) {
          // The row is gone either way; an expired link is of no use again. Committed, then refused.
          return undefined;
        }
        changed.accounts([user.id]);
        const [row] = await this.db.table('accounts', trx).where({ id: user.id }).update({ email_verified: true }).returning('*');
        return toUser(row as AccountRow);
      })
      .then((user) => {
        if (!user) throw invalid();
        return user;
      });
  }

  /** Within the caller's transaction: the account's address is no longer verified, and a link for the new one is staged. */
  async addressChanged(trx: Knex.Transaction, stage: StageEffect, user: { id: number; login: string; email: string }): Promise<void> {
    changed.accounts([user.id]);
    await this.db.table('accounts', trx).where({ id: user.id }).update({ email_verified: false });
    await this.stage(trx, stage, user);
  }
}
