import { randomBytes } from 'node:crypto';
import { NotAllowedError, NotAuthenticatedError, NotFoundError, UnavailableError } from '@platform/errors';
import { unixSeconds, type Database } from '@platform/db';
import type { orgsTeamsV1 } from '@platform/proto';
import type { FailureLimiter, Logger } from '@platform/service-kit';
import { changed } from '../changes';
import { assertMayLogIn, toUser, USER_COLUMNS, type AccountRow, type Identity } from './identity';
import { hashToken } from './tokens';
import type { EmailVerification } from './email-verification';

/** How long sessions last, in seconds (SESSION_IDLE_TIMEOUT, SESSION_MAX_LIFETIME). */
export interface SessionLifetimes {
  idleSeconds: number;
  maxSeconds: number;
}

interface SessionRow {
  id: number;
  uid: number;
  user_agent: string;
  address: string;
  created_at: Date;
  last_used_at: Date;
  absolute_expires_at: Date;
}

const SESSION_COLUMNS = ['id', 'uid', 'user_agent', 'address', 'created_at', 'last_used_at', 'absolute_expires_at'] as const;

/** The longest User-Agent kept; the rest says nothing a person needs to recognise the client. */
const MAX_USER_AGENT = 512;
/** Rows of ended sessions are deleted this often. */
const CLEANUP_EVERY_MS = 5 * 60_000;

/** An email's domain, lower-cased, for the allowed-domains check. */
const domainOf = (email: string) =>
  email
    .slice(email.lastIndexOf('@') + 1)
    .toLowerCase()
    .replace(/\.$/, '');

/**
 * Refuses (403) a new account while registration is disabled, or for an email outside the allowed domains when the
 * site lists any; both read now, so a change holds on the next attempt. Sign-up and single sign-on share it.
 */
export async function assertRegistrationOpen(db: Database, email: string): Promise<void> {
  const settings = await db.table('site_settings').where({ id: 1 }).first('disable_registration');
  if (settings?.disable_registration) throw new NotAllowedError('registration is disabled on this site');
  const domains: string[] = await db.table('allowed_domains').pluck('name');
  if (domains.length && !domains.includes(domainOf(email)))
    throw new NotAllowedError(`sign-up is open to email addresses of ${domains.sort().join(', ')} only`);
}

/**
 * Console sessions (docs/authentication.md, "Console sessions"): a browser's sign-in, kept server-side so every
 * gateway sees it and ending it holds on the very next request. The secret (the cookie's value, 256 random bits)
 * leaves only in the creation answer; rows are found by its SHA-256, so a presented secret is never compared byte by
 * byte with a stored one. A session ends after `idleSeconds` without use and `maxSeconds` after sign-in.
 */
export class Sessions {
  private cleanupTimer?: NodeJS.Timeout;

  constructor(
    private readonly db: Database,
    private readonly identity: Identity,
    private readonly lifetimes: SessionLifetimes,
    /** Sign-up attempts per client address. */
    private readonly signUps: FailureLimiter,
    /** Sign-up's address verification (its mail goes through the outbox); absent, sign-up is unavailable. */
    private readonly verification?: EmailVerification,
  ) {}

  private table() {
    return this.db.table<SessionRow>('sessions');
  }

  /** When a session ends unless used before: the earlier of its idle and its absolute end. */
  private expiresAt(row: Pick<SessionRow, 'last_used_at' | 'absolute_expires_at'>): Date {
    const idle = new Date(row.last_used_at).getTime() + this.lifetimes.idleSeconds * 1000;
    return new Date(Math.min(idle, new Date(row.absolute_expires_at).getTime()));
  }

  private info(row: SessionRow): orgsTeamsV1.SessionInfo {
    return {
      id: Number(row.id),
      userAgent: row.user_agent,
      address: row.address,
      createdUnix: unixSeconds(row.created_at),
      lastUsedUnix: unixSeconds(row.last_used_at),
      expiresUnix: unixSeconds(this.expiresAt(row)),
      maxExpiresUnix: unixSeconds(row.absolute_expires_at),
    };
  }

  /** Starts a session of a user the caller has authenticated; the secret is answered once. */
  async create(userId: number, userAgent: string, address: string): Promise<orgsTeamsV1.CreatedSession> {
    const user = await this.identity.getUser({ id: userId, login: '' });
    const secret = randomBytes(32).toString('base64url');
    const [row] = await this.table()
      .insert({
        uid: userId,
        secret_hash: hashToken(secret),
        user_agent: userAgent.slice(0, MAX_USER_AGENT),
        address: address.slice(0, 64),
        absolute_expires_at: new Date(Date.now() + this.lifetimes.maxSeconds * 1000),
      } as never)
      .returning([...SESSION_COLUMNS]);
    return { secret, session: this.info(row as SessionRow), user };
  }

  /**
   * The active user of a live session, its use recorded. An ended or expired session is deleted and refused (401), as
   * is the session of a user who may no longer sign in.
   */
  async authenticate(secret: string): Promise<orgsTeamsV1.AuthenticateSessionResponse> {
    const row = await this.db
      .table('sessions as s')
      .join('accounts as a', 'a.id', 's.uid')
      .where('s.secret_hash', hashToken(secret))
      .first(...USER_COLUMNS.map((c) => `a.${c}`), ...SESSION_COLUMNS.map((c) => `s.${c} as session_${c}`));
    if (!row) throw new NotAuthenticatedError('invalid session');
    const session: SessionRow = Object.fromEntries(SESSION_COLUMNS.map((c) => [c, row[`session_${c}`]])) as unknown as SessionRow;
    if (this.expiresAt(session).getTime() <= Date.now()) {
      await this.table().where({ id: session.id }).delete();
      throw new NotAuthenticatedError('session expired');
    }
    const account = row as AccountRow;
    assertMayLogIn(account);
    // Last use is written at most once a minute (sooner with a short idle timeout), so a busy console costs one read.
    const every = Math.min(60_000, (this.lifetimes.idleSeconds * 1000) / 10);
    if (Date.now() - new Date(session.last_used_at).getTime() > every) {
      const [updated] = await this.table()
        .where({ id: session.id })
        .update({ last_used_at: this.db.knex.fn.now() } as never)
        .returning([...SESSION_COLUMNS]);
      if (updated) Object.assign(session, updated);
    }
    const user = toUser(account);
    if (this.identity.secondFactor) user.mustEnrollTwoFactor = await this.identity.secondFactor.mustEnroll(user);
    return { user, session: this.info(session) };
  }

  /** A user's live sessions, most recently used first. */
  async list(userId: number): Promise<orgsTeamsV1.SessionInfo[]> {
    const rows = (await this.table()
      .where({ uid: userId })
      .orderBy([
        { column: 'last_used_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .select(...SESSION_COLUMNS)) as SessionRow[];
    const now = Date.now();
    return rows.filter((r) => this.expiresAt(r).getTime() > now).map((r) => this.info(r));
  }

  /** Ends one of a user's sessions; 404 when it has none of that id. */
  async delete(userId: number, id: number): Promise<void> {
    // A user's credentials changed: what readers keep of the account goes too, as for a deleted token.
    changed.accounts([userId]);
    const n = await this.table().where({ uid: userId, id }).delete();
    if (n === 0) throw new NotFoundError(`session ${id} does not exist`);
  }

  /**
   * Creates a user by self-registration and signs it in: only while registration is enabled, with an email in an
   * allowed domain when the site lists any (both read now, so a change holds on the next attempt), counted per client
   * address. The account and the mail verifying its address are one change (the mail goes through the outbox once it
   * committed, without the answer waiting for it). Where the site lists allowed domains the address is what admits a
   * person, so no session starts until it is verified. The account is removed again when its session cannot be
   * started, so a failed sign-up leaves nothing.
   */
  async signUp(req: orgsTeamsV1.SignUpRequest): Promise<orgsTeamsV1.SignUpResponse> {
    const key = `signup:${req.address}`;
    this.signUps.assertAllowed(key, 'too many sign-ups from this address');
    this.signUps.fail(key);
    await assertRegistrationOpen(this.db, req.email);
    if (!this.verification) throw new UnavailableError('sign-up is not served here');
    const verification = this.verification;
    const user = await verification.outbox.run(
      async (trx, stage) => {
        const made = await this.identity.createUser(
          {
            username: req.username,
            email: req.email,
            password: req.password,
            fullName: req.fullName,
            mustChangePassword: false,
            isAdmin: false,
          },
          { emailVerified: false, trx },
        );
        await verification.stage(trx, stage, made);
        return made;
      },
      { detach: true },
    );
    if (await this.db.table('allowed_domains').first('name')) return { user };
    try {
      return { session: await this.create(user.id, req.userAgent, req.address), user };
    } catch (err) {
      await this.identity.deleteAccount(user.id);
      throw err;
    }
  }

  /**
   * Deletes the rows of expired sessions now and every few minutes, each pass run by `pass` (which announces what it
   * changed, as a call would: changes.ts); answers how to stop.
   */
  startCleanup(log: Logger, pass: <T>(work: () => Promise<T>) => Promise<T> = (work) => work()): () => void {
    const run = () => pass(() => this.deleteExpired()).catch((err: unknown) => log.warn({ err }, 'could not delete expired sessions'));
    void run();
    this.cleanupTimer = setInterval(run, CLEANUP_EVERY_MS);
    this.cleanupTimer.unref();
    return () => clearInterval(this.cleanupTimer);
  }

  /** Deletes the rows of sessions past their idle or absolute end; answers how many. */
  async deleteExpired(): Promise<number> {
    const idleCutoff = new Date(Date.now() - this.lifetimes.idleSeconds * 1000);
    return this.table().where('absolute_expires_at', '<=', new Date()).orWhere('last_used_at', '<=', idleCutoff).delete();
  }
}
