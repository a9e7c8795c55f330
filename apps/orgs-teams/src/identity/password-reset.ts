import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import type { Database, EffectHandler, Outbox } from '@platform/db';
import { InputError, ValidationError } from '@platform/errors';
import { FailureLimiter, publicLink, type Logger, type SecretBox } from '@platform/service-kit';
import type { AuditStore } from '../audit/audit-store';
import { changed } from '../changes';
import type { SendMail } from './email-verification';
import { ACCOUNT_TYPE, failureKey, MIN_PASSWORD_LENGTH, type AccountRow } from './identity';
import { hashPassword } from './passwords';
import { hashToken } from './tokens';

/**
 * Forgotten passwords (docs/authentication.md, "Forgotten passwords"; decision D106): a person who cannot sign in asks
 * for a link by login or address, and the link, mailed to the account's address, sets a new password once.
 *
 * - The answer to a request tells nothing: it is the same whatever the name names, and it is given before the account
 *   is even looked up (the lookup and the mail come after it), so neither its body nor its time depends on the account.
 * - The link's code is a selector, which finds the row, and a verifier, of which only the SHA-256 is kept and compared
 *   in constant time; it travels in the console URL's fragment, which browsers send to no server.
 * - One link per account: a new one replaces it. It works once, for `lifetimeMs`, and only while the account keeps the
 *   address it was sent to and the password it had.
 * - Limits: requests and invalid codes per client address, and requests per name, answered 429 for unknown names as for
 *   accounts; mails per account are limited without a word, since a refusal there would tell that the name is one.
 */

/** The outbox effect that mails a link: handed to contracts-licensing, whose notices send or keep mails. */
export const PASSWORD_RESET_MAIL_EFFECT = 'mail.password-reset';

/** The console page a link opens (apps/console/src/password-reset.tsx). */
export const RESET_PAGE = '/reset-password';

export interface PasswordResetLimits {
  /** How long a link works (PASSWORD_RESET_LINK_LIFETIME). */
  lifetimeMs: number;
  /** Requests and invalid codes one client address may send per window (PASSWORD_RESET_MAX_PER_ADDRESS). */
  maxPerAddress: number;
  /** Requests per name, and mails per account, per window (PASSWORD_RESET_MAX_PER_ACCOUNT). */
  maxPerAccount: number;
  /** PASSWORD_RESET_WINDOW. */
  windowMs: number;
}

/** What the outbox keeps until the mail went: the code sealed (the outbox keeps no secret in the clear). */
interface ResetMail {
  to: string;
  login: string;
  sealedCode: string;
  /** How long the link works, in words: "30 minutes". */
  lifetime: string;
  dedupeKey: string;
}

interface ResetRow {
  uid: number;
  selector: string;
  verifier_hash: string;
  email: string;
  password_fingerprint: string;
  expires_at: Date;
}

const SELECTOR_BYTES = 16;
const VERIFIER_BYTES = 32;
/** `<selector>.<verifier>`, each base64url of its random bytes. */
const CODE = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** What identifies the password a link was made for, without keeping anything of it that could be checked offline. */
const fingerprint = (passwordHash: string) => createHash('sha256').update(passwordHash, 'utf8').digest('hex');

/** A link's lifetime in words, in the largest whole unit: "30 minutes", "1 hour", "45 seconds". */
export function lifetimeInWords(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const [n, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

const escapeHtml = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The mail of a link, plain text and HTML. */
export function passwordResetMail(login: string, link: string, to: string, lifetime: string) {
  const intro = `someone, hopefully you, asked to set a new password for the account ${login}. To choose one, open this link within ${lifetime} (it works once):`;
  const outro = 'If you did not ask for it, ignore this mail: your password stays as it is.';
  return {
    to,
    subject: 'Reset your password',
    text: `Hello ${login},\n\n${intro}\n\n${link}\n\n${outro}\n`,
    html: `<p>Hello ${escapeHtml(login)},</p><p>${escapeHtml(intro)}</p><p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p><p>${escapeHtml(outro)}</p>`,
  };
}

/**
 * The outbox handler mailing a link, built on the platform's public URL (PUBLIC_URL), never on a request's Host, with
 * the code in the fragment: it never reaches a server's log or another site's Referer.
 */
export function passwordResetMailEffects(secrets: SecretBox, publicUrl: string, send: SendMail): Record<string, EffectHandler> {
  const mail: EffectHandler<ResetMail> = {
    apply: async (m) => {
      const link = publicLink(publicUrl, `${RESET_PAGE}#code=${secrets.open(m.sealedCode)}`);
      await send({ ...passwordResetMail(m.login, link, m.to, m.lifetime), dedupeKey: m.dedupeKey });
    },
  };
  return { [PASSWORD_RESET_MAIL_EFFECT]: mail };
}

export class PasswordReset {
  /** Requests and invalid codes per client address. */
  private readonly addresses: FailureLimiter;
  /** Requests per name as given (`name:`), and mails per account (`account:`). */
  private readonly accounts: FailureLimiter;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly secrets: SecretBox,
    /** Whose count of wrong passwords a new password lifts. */
    private readonly passwordFailures: FailureLimiter,
    private readonly audit: AuditStore,
    private readonly limits: PasswordResetLimits,
    private readonly log: Logger,
  ) {
    this.addresses = new FailureLimiter({ max: limits.maxPerAddress, windowMs: limits.windowMs });
    this.accounts = new FailureLimiter({ max: limits.maxPerAccount, windowMs: limits.windowMs });
  }

  /**
   * Asks for a link for the account `login` names (a login or an address). Only the limits are checked before the
   * answer, in memory, and the same for every name; the account is looked up and its mail staged afterwards.
   */
  request(login: string, address: string): void {
    const name = login.trim().toLowerCase();
    if (!name) throw new ValidationError('login: name a login or an e-mail address', [{ field: 'login', description: 'required' }]);
    // Both are asked before either counts: a refused request takes no place.
    this.addresses.assertAllowed(`address:${address}`, 'too many password-reset requests from this address');
    this.accounts.assertAllowed(`name:${name}`, 'too many password-reset requests for this account');
    this.addresses.fail(`address:${address}`);
    this.accounts.fail(`name:${name}`);
    setImmediate(() => {
      this.mailLink(name).catch((err: unknown) => this.log.warn({ err }, 'could not make a password-reset link'));
    });
  }

  /** A new link for the active user `name` names, replacing its old one, and its mail staged; nothing for any other name. */
  private async mailLink(name: string): Promise<void> {
    const user = await this.db
      .table<AccountRow>('accounts')
      .where({ type: ACCOUNT_TYPE.user, active: true, prohibit_login: false })
      .andWhere((q) => q.where({ lower_login: name }).orWhere({ lower_email: name }))
      .first('id', 'login', 'email', 'password_hash');
    if (!user?.password_hash || !user.email) return;
    // An account named by its login and its address is asked for under two names: its mails are counted once more.
    const key = `account:${user.id}`;
    if (this.accounts.retryAfterSeconds(key) > 0) return;
    this.accounts.fail(key);
    const selector = randomBytes(SELECTOR_BYTES).toString('base64url');
    const verifier = randomBytes(VERIFIER_BYTES).toString('base64url');
    await this.outbox.run(
      async (trx, stage) => {
        await this.db
          .table('password_resets', trx)
          .insert({
            uid: user.id,
            selector,
            verifier_hash: hashToken(verifier),
            email: user.email,
            password_fingerprint: fingerprint(user.password_hash!),
            expires_at: new Date(Date.now() + this.limits.lifetimeMs),
            created_at: new Date(),
          })
          .onConflict('uid')
          .merge();
        stage(PASSWORD_RESET_MAIL_EFFECT, {
          to: user.email,
          login: user.login,
          sealedCode: this.secrets.seal(`${selector}.${verifier}`),
          lifetime: lifetimeInWords(this.limits.lifetimeMs),
          // Names the link by its selector, never by its secret: the key is listed with the kept mails.
          dedupeKey: `password-reset:${user.id}:${selector}`,
        } satisfies ResetMail);
      },
      { detach: true },
    );
  }

  /** Whose password a link sets, and until when; 400 for a link that does not work (counted against the address). */
  async check(code: string, address: string): Promise<{ login: string; expiresUnix: number }> {
    const found = await this.valid(code, address);
    return { login: found.user.login, expiresUnix: Math.floor(new Date(found.reset.expires_at).getTime() / 1000) };
  }

  /**
   * Sets a new password with a link, once, in one transaction: the link is spent, every console session of the account
   * ends (whoever knew the old password may have signed in with it), must-change-password is cleared and the address
   * counts as verified (the link proved it). Access tokens stay: they are credentials of their own, not the password's.
   */
  async reset(
    req: { code: string; newPassword: string; address: string },
    requestId: string,
  ): Promise<{ login: string; sessionsEnded: number }> {
    // Refused before the code is looked at, so the link stays usable and the refusal tells nothing about it.
    // (Over-long ones are refused by the service's field limits, limits.ts.)
    if (req.newPassword.length < MIN_PASSWORD_LENGTH) {
      const description = `at least ${MIN_PASSWORD_LENGTH} characters`;
      throw new ValidationError(`new_password: ${description}`, [{ field: 'new_password', description }]);
    }
    // Checked before the derivation, so a wrong code costs no scrypt; checked again below, under the row's lock.
    await this.valid(req.code, req.address);
    const passwordHash = await hashPassword(req.newPassword);
    const { user, sessionsEnded } = await this.db.transaction(async (trx) => {
      // Another request may have spent the link meanwhile: only one of them sets a password.
      const { user, reset } = await this.valid(req.code, req.address, trx);
      await this.db.table('password_resets', trx).where({ uid: reset.uid }).delete();
      changed.accounts([user.id]);
      await this.db
        .table('accounts', trx)
        .where({ id: user.id })
        .update({ password_hash: passwordHash, must_change_password: false, email_verified: true });
      const sessionsEnded = await this.db.table('sessions', trx).where({ uid: user.id }).delete();
      return { user, sessionsEnded };
    });
    // The owner proved the mailbox: the lockout its guessers caused is lifted, as a site admin's new password lifts it.
    this.passwordFailures.reset(failureKey(user.id));
    // No one is signed in to record it at the edge: the account is the actor.
    await this.audit
      .record({
        id: randomUUID(),
        timeUnixMs: Date.now(),
        actorId: user.id,
        actorLogin: user.login,
        action: 'userResetPassword',
        method: 'POST',
        route: '/user/password-reset/new-password',
        target: '/user/password-reset/new-password',
        org: '',
        status: 204,
        requestId,
        client: req.address,
      })
      .catch((err: unknown) => this.log.warn({ err, login: user.login }, 'could not record a password reset in the audit trail'));
    return { login: user.login, sessionsEnded };
  }

  /**
   * The link's row and account when the code works: known, its verifier right (compared in constant time), not expired,
   * for an active user who still has the address it was sent to and the password it had. Each code that does not work
   * counts against the client address; past the limit even a right one is refused until the window closes.
   */
  private async valid(
    code: string,
    address: string,
    trx?: Knex.Transaction,
  ): Promise<{ reset: ResetRow; user: Pick<AccountRow, 'id' | 'login'> }> {
    const attempt = this.addresses.reserve(`address:${address}`, 'too many password-reset requests from this address');
    try {
      const found = await this.lookUp(code, trx);
      if (!found) {
        attempt.fail();
        throw new InputError('this password reset link is not valid any more: ask for a new one');
      }
      return found;
    } finally {
      // A working link forgets nothing: with a link of their own a guesser could otherwise clear their count at will.
      attempt.release();
    }
  }

  /** Within a transaction the row is locked, so of two requests spending one link only one finds it. */
  private async lookUp(code: string, trx?: Knex.Transaction) {
    const parts = CODE.exec(code);
    if (!parts) return undefined;
    const [, selector, verifier] = parts;
    const rows = this.db.table<ResetRow>('password_resets', trx).where({ selector });
    const reset = (await (trx ? rows.forUpdate() : rows).first()) as ResetRow | undefined;
    if (!reset || !timingSafeEqual(Buffer.from(hashToken(verifier), 'hex'), Buffer.from(reset.verifier_hash, 'hex'))) return undefined;
    if (new Date(reset.expires_at).getTime() <= Date.now()) {
      // Of no use again; the caller is told as for any other link that does not work.
      await this.db.table('password_resets', trx).where({ uid: reset.uid }).delete();
      return undefined;
    }
    const user = await this.db
      .table<AccountRow>('accounts', trx)
      .where({ id: reset.uid, type: ACCOUNT_TYPE.user, active: true, prohibit_login: false })
      .first('id', 'login', 'lower_email', 'password_hash');
    if (
      !user?.password_hash ||
      user.lower_email !== reset.email.toLowerCase() ||
      fingerprint(user.password_hash) !== reset.password_fingerprint
    )
      return undefined;
    return { reset, user };
  }
}
