import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { Secret, TOTP } from 'otpauth';
import { ConflictError, InputError, NotAllowedError, NotAuthenticatedError, NotFoundError, ValidationError } from '@platform/errors';
import type { Database } from '@platform/db';
import type { FailureLimiter, SecretBox } from '@platform/service-kit';
import { changed } from '../changes';
import { failureKey } from './identity';
import { verifyPassword } from './passwords';

/** Whom the site requires a second factor of (docs/authentication.md, "Second factor (TOTP)"). */
export const TWO_FACTOR_REQUIREMENTS = ['off', 'admins', 'all'] as const;
export type TwoFactorRequirement = (typeof TWO_FACTOR_REQUIREMENTS)[number];

/** RFC 6238's defaults, which every authenticator app reads: SHA-1, 6 digits, 30-second steps. */
const PERIOD = 30;
const DIGITS = 6;
/** How many recovery codes a user gets; each is 80 random bits, so a fast hash at rest is enough. */
const RECOVERY_CODES = 10;

interface TwoFactorRow {
  uid: number;
  secret_sealed: string;
  enabled: boolean;
  last_used_step: number | string;
}

/** The message a client is told when a password was right but a second factor is missing. */
export const OTP_REQUIRED = 'a two-factor authentication code is required: send it in the X-Gitea-OTP header';

/** A recovery code as typed: case, spaces and dashes do not matter. */
const normalizeRecovery = (code: string) => code.toUpperCase().replace(/[\s-]/g, '');
const hashRecovery = (code: string) => createHash('sha256').update(normalizeRecovery(code)).digest('hex');
/** A TOTP code is exactly DIGITS digits; anything else is taken for a recovery code. */
const isTotpCode = (code: string) => new RegExp(`^\\d{${DIGITS}}$`).test(code.trim());

/** `XXXX-XXXX-XXXX-XXXX` of base32 (no 0/1/8/9 to mistake for O/I/B/g). */
function newRecoveryCode(): string {
  const b32 = new Secret({ buffer: randomBytes(10).buffer }).base32;
  return b32.match(/.{4}/g)!.join('-');
}

/**
 * TOTP second factors of local accounts, with the `otpauth` library: the secret sealed at rest, codes checked with a
 * window of one step either side (clocks drift), and a code accepted at most once, since the step it was accepted for
 * is kept and only a later one is taken next (a code seen over someone's shoulder is spent).
 */
export class TwoFactor {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    /** Failed sign-ins per account (Identity's): a wrong password or code given to turn the factor off counts there. */
    private readonly accountFailures: FailureLimiter,
    /** The name authenticator apps show the account under. */
    private readonly issuer = 'Platform',
  ) {}

  private rows() {
    return this.db.table<TwoFactorRow>('two_factor');
  }

  private totp(secretBase32: string, label = ''): TOTP {
    return new TOTP({ issuer: this.issuer, label, algorithm: 'SHA1', digits: DIGITS, period: PERIOD, secret: Secret.fromBase32(secretBase32) });
  }

  /** Whether the user has a confirmed second factor. */
  async isEnabled(userId: number): Promise<boolean> {
    const row = await this.rows().where({ uid: userId, enabled: true }).first('uid');
    return row !== undefined;
  }

  async requirement(): Promise<TwoFactorRequirement> {
    const row = await this.db.table('site_settings').where({ id: 1 }).first('require_two_factor');
    return (row?.require_two_factor as TwoFactorRequirement | undefined) ?? 'off';
  }

  async setRequirement(value: string): Promise<TwoFactorRequirement> {
    if (!(TWO_FACTOR_REQUIREMENTS as readonly string[]).includes(value))
      throw new ValidationError(`requirement: one of ${TWO_FACTOR_REQUIREMENTS.join(', ')}`, [
        { field: 'requirement', description: `one of ${TWO_FACTOR_REQUIREMENTS.join(', ')}` },
      ]);
    await this.db.table('site_settings').where({ id: 1 }).update({ require_two_factor: value });
    return value as TwoFactorRequirement;
  }

  /** Whether the site requires a second factor of this user (a person; service accounts have no password). */
  async requiredOf(user: { isAdmin: boolean }): Promise<boolean> {
    const req = await this.requirement();
    return req === 'all' || (req === 'admins' && user.isAdmin);
  }

  /** Whether a password sign-in of this user must enrol before anything else. */
  async mustEnroll(user: { id: number; isAdmin: boolean }): Promise<boolean> {
    return (await this.requiredOf(user)) && !(await this.isEnabled(user.id));
  }

  async status(userId: number): Promise<{ enabled: boolean; recoveryCodesLeft: number; required: boolean }> {
    const user = await this.db.table('accounts').where({ id: userId }).first('id', 'is_admin');
    if (!user) throw new NotFoundError(`user ${userId} does not exist`);
    const enabled = await this.isEnabled(userId);
    const left = enabled ? await this.db.table('recovery_codes').where({ uid: userId }).whereNull('used_at').count({ n: '*' }) : [{ n: 0 }];
    return { enabled, recoveryCodesLeft: Number(left[0].n), required: await this.requiredOf({ isAdmin: user.is_admin }) };
  }

  /** A new secret for a user without a second factor (a pending one is replaced); 409 when one is on. */
  async begin(userId: number): Promise<{ secret: string; otpauthUri: string }> {
    const user = await this.db.table('accounts').where({ id: userId, type: 0 }).first('login');
    if (!user) throw new NotFoundError(`user ${userId} does not exist`);
    if (await this.isEnabled(userId)) throw new ConflictError('two-factor authentication is already on; turn it off first to enrol again');
    const secret = new Secret({ size: 20 }).base32;
    await this.rows()
      .insert({ uid: userId, secret_sealed: this.box.seal(secret), enabled: false, last_used_step: 0 } as never)
      .onConflict('uid')
      .merge(['secret_sealed', 'enabled', 'last_used_step']);
    return { secret, otpauthUri: this.totp(secret, user.login).toString() };
  }

  /**
   * Turns the pending secret on with a code of it; answers fresh recovery codes. A wrong code here is not counted as a
   * failed sign-in: the secret was handed to this same caller moments ago, so nothing is guessed (a caller who could
   * guess codes would rather begin an enrolment and read the secret), and a typo while enrolling must not lock the
   * account's password sign-in.
   */
  async confirm(userId: number, code: string): Promise<{ codes: string[] }> {
    const row = await this.rows().where({ uid: userId }).first();
    if (!row) throw new NotFoundError('no two-factor enrolment is pending: begin one first');
    if (row.enabled) throw new ConflictError('two-factor authentication is already on');
    if (!(await this.acceptTotp(row, code))) throw new ValidationError('code: not a current code of the new secret', [{ field: 'code', description: 'wrong code' }]);
    return this.db.transaction(async (trx) => {
      await this.db.table('two_factor', trx).where({ uid: userId }).update({ enabled: true });
      return { codes: await this.replaceRecoveryCodes(userId, trx) };
    });
  }

  /** Turns the second factor off after the account's password and a current code or a recovery code. */
  async disable(userId: number, password: string, code: string): Promise<void> {
    await this.asHolder(userId, password, code, true, () => this.remove(userId));
  }

  /** New recovery codes (the old ones stop working) after the account's password and a current code. */
  async regenerate(userId: number, password: string, code: string): Promise<{ codes: string[] }> {
    return this.asHolder(userId, password, code, false, () =>
      this.db.transaction(async (trx) => ({ codes: await this.replaceRecoveryCodes(userId, trx) })),
    );
  }

  /** A site admin's reset: the user's second factor and recovery codes are gone (it may enrol again). */
  async reset(login: string): Promise<number> {
    const user = await this.db.table('accounts').where({ type: 0, lower_login: login.toLowerCase() }).first('id');
    if (!user) throw new NotFoundError(`user ${login} does not exist`);
    await this.remove(user.id);
    return Number(user.id);
  }

  /**
   * The second-factor check of a password sign-in: nothing for a user without one; otherwise the code presented must
   * be a current, unused TOTP code or an unused recovery code (then spent). 401 when it is missing or wrong.
   */
  async checkSignIn(userId: number, code: string): Promise<void> {
    const row = await this.rows().where({ uid: userId, enabled: true }).first();
    if (!row) return;
    if (!code.trim()) throw new NotAuthenticatedError(OTP_REQUIRED);
    if (!(await this.acceptCode(row, code, true))) throw new NotAuthenticatedError('invalid two-factor authentication code');
  }

  /**
   * Runs `act` once the caller has shown again that it holds the account: its password and a code, one attempt against
   * the account's limit of failed sign-ins, as a password sign-in with a code is. A token or a session alone is not
   * enough, since either may be stolen, and a code alone could be guessed. Over the limit: 429, nothing checked. A
   * wrong password is 403 and a wrong code 422, each counted as a failed sign-in; success forgets the account's
   * earlier failures, as a sign-in does. The code is checked only after the password, so a wrong password spends none.
   */
  private async asHolder<T>(userId: number, password: string, code: string, recoveryAllowed: boolean, act: () => Promise<T>): Promise<T> {
    const missing = [
      ...(password ? [] : [{ field: 'password', description: 'required' }]),
      ...(code.trim() ? [] : [{ field: 'code', description: 'required' }]),
    ];
    if (missing.length) throw new InputError(missing.map((m) => `${m.field}: required`).join('; '), missing);
    const attempt = this.accountFailures.reserve(failureKey(userId), 'too many failed sign-in attempts for this account');
    try {
      const row = await this.rows().where({ uid: userId, enabled: true }).first();
      if (!row) throw new NotFoundError('two-factor authentication is not on');
      const account = await this.db.table('accounts').where({ id: userId }).first('password_hash');
      if (!(await verifyPassword(password, account?.password_hash ?? ''))) {
        changed.signin([userId]);
        attempt.fail();
        throw new NotAllowedError('the password is wrong');
      }
      if (!(await this.acceptCode(row, code, recoveryAllowed))) {
        changed.signin([userId]);
        attempt.fail();
        throw new ValidationError('code: not a current two-factor code', [{ field: 'code', description: 'wrong code' }]);
      }
      const done = await act();
      attempt.succeed();
      return done;
    } finally {
      attempt.release();
    }
  }

  private async acceptCode(row: TwoFactorRow, code: string, recoveryAllowed: boolean): Promise<boolean> {
    if (isTotpCode(code)) return this.acceptTotp(row, code);
    return recoveryAllowed && this.spendRecoveryCode(row.uid, code);
  }

  /**
   * Whether `code` is the secret's code of the current step or one either side, for a step after the last one taken.
   * The step is recorded in the same statement that checks it is new, so two sign-ins racing with one code get one.
   */
  private async acceptTotp(row: TwoFactorRow, code: string): Promise<boolean> {
    if (!isTotpCode(code)) return false;
    const secret = this.box.open(row.secret_sealed);
    const delta = this.totp(secret).validate({ token: code.trim(), window: 1 });
    if (delta === null) return false;
    const step = Math.floor(Date.now() / 1000 / PERIOD) + delta;
    const n = await this.rows().where({ uid: row.uid }).andWhere('last_used_step', '<', step).update({ last_used_step: step });
    return n === 1;
  }

  /** Spends an unused recovery code of the user; false when it is none (or already spent). */
  private async spendRecoveryCode(uid: number, code: string): Promise<boolean> {
    const n = await this.db
      .table('recovery_codes')
      .where({ uid, code_hash: hashRecovery(code) })
      .whereNull('used_at')
      .update({ used_at: this.db.knex.fn.now() });
    return n === 1;
  }

  private async replaceRecoveryCodes(uid: number, trx: Knex.Transaction): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
    await this.db.table('recovery_codes', trx).where({ uid }).delete();
    await this.db.table('recovery_codes', trx).insert(codes.map((c) => ({ uid, code_hash: hashRecovery(c) })));
    return codes;
  }

  private async remove(uid: number): Promise<void> {
    await this.db.transaction(async (trx) => {
      await this.db.table('recovery_codes', trx).where({ uid }).delete();
      await this.db.table('two_factor', trx).where({ uid }).delete();
    });
  }
}
