import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { ConflictError, InputError, NotAllowedError, NotAuthenticatedError, NotFoundError, ValidationError } from '@platform/errors';
import { isUniqueViolation, type Database, unixSeconds } from '@platform/db';
import type { orgsTeamsV1 } from '@platform/proto';
import { FailureLimiter, parseAccessScopes, TOKEN_ACCESS_SCOPES, type CallOptions, type TokenAccessScope } from '@platform/service-kit';
import { changed } from '../changes';
import { hashPassword, PASSWORD_VERIFIER, verifyPassword } from './passwords';
import { generateToken, hashToken } from './tokens';

/** The second-factor checks of password sign-ins (totp.ts). */
export interface SecondFactor {
  /** Nothing for a user without one; 401 when the code is missing or wrong. */
  checkSignIn(userId: number, code: string): Promise<void>;
  /** Whether the site requires a second factor of the user and it has none yet. */
  mustEnroll(user: { id: number; isAdmin: boolean }): Promise<boolean>;
}

/** Account types: users and organizations as in Gitea, and service accounts (docs/service-accounts.md). */
export const ACCOUNT_TYPE = { user: 0, organization: 1, serviceAccount: 2 } as const;

/** Gitea's login rule: letters, digits, and . _ - inside, at most 40 characters. */
export const LOGIN = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/;
/** How a login that breaks the rule is told. */
export const LOGIN_RULE = 'letters, digits, ".", "_" or "-" inside; at most 40 characters';
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 8;
/** The uses a token may be limited to (docs/authentication.md): `license-proxy`, what an installer's license proxy may do. */
export const TOKEN_SCOPES = ['license-proxy'];

export interface AccountRow {
  id: number;
  type: number;
  login: string;
  lower_login: string;
  full_name: string;
  lower_email: string | null;
  email: string;
  password_hash: string | null;
  must_change_password: boolean;
  is_admin: boolean;
  active: boolean;
  prohibit_login: boolean;
  avatar_url: string;
  language: string;
  location: string;
  website: string;
  description: string;
  client_org_user: boolean;
  created_at: Date;
  last_login_at: Date | null;
  /** Service accounts: the organization it belongs to, null for a site-wide one. */
  service_account_org_id: number | null;
  login_name: string;
  allow_create_organization: boolean;
  theme: string;
  diff_view_style: string;
  hide_email: boolean;
  hide_activity: boolean;
  /** The address was proven by its mailed link, or vouched for by a site admin (email-verification.ts). */
  email_verified: boolean;
}

/** The columns a User is made of: hot reads ask for these, never `*` (which brings the password hash along). */
export const USER_COLUMNS = [
  'id',
  'type',
  'login',
  'full_name',
  'email',
  'must_change_password',
  'is_admin',
  'active',
  'prohibit_login',
  'avatar_url',
  'language',
  'location',
  'website',
  'description',
  'client_org_user',
  'created_at',
  'last_login_at',
  'service_account_org_id',
  'login_name',
  'allow_create_organization',
  'theme',
  'diff_view_style',
  'hide_email',
  'hide_activity',
  'email_verified',
] as const satisfies readonly (keyof AccountRow)[];

/** The User message of an account row (never the password hash). */
export function toUser(row: AccountRow): orgsTeamsV1.User {
  return {
    id: row.id,
    login: row.login,
    fullName: row.full_name,
    email: row.email,
    avatarUrl: row.avatar_url,
    language: row.language,
    isAdmin: row.is_admin,
    lastLoginUnix: unixSeconds(row.last_login_at),
    createdUnix: unixSeconds(row.created_at),
    type: row.type,
    active: row.active,
    prohibitLogin: row.prohibit_login,
    location: row.location,
    website: row.website,
    description: row.description,
    orgAdmin: false,
    clientOrgUser: row.client_org_user,
    mustChangePassword: row.must_change_password,
    serviceAccount: row.type === ACCOUNT_TYPE.serviceAccount,
    serviceAccountOrgId: Number(row.service_account_org_id ?? 0),
    loginName: row.login_name,
    allowCreateOrganization: row.allow_create_organization,
    theme: row.theme,
    diffViewStyle: row.diff_view_style,
    hideEmail: row.hide_email,
    hideActivity: row.hide_activity,
    signInLockedUntilUnix: 0,
    mustEnrollTwoFactor: false,
    // Rows read without the column (a narrower select) say nothing rather than "unverified".
    ...(row.email_verified === undefined ? {} : { emailVerified: row.email_verified }),
  };
}

/**
 * Refuses (403) the password sign-in of a user whose address is not verified while the site lists allowed domains:
 * there the address is what admits a person, so it must be proven first (docs/authentication.md).
 */
export async function assertAddressTrusted(db: Database, row: Pick<AccountRow, 'email' | 'email_verified'>): Promise<void> {
  if (row.email_verified !== false) return;
  const listed = await db.table('allowed_domains').first('name');
  if (listed)
    throw new NotAllowedError(
      `your e-mail address ${row.email} is not verified yet: open the link mailed to it, or ask for a new mail ` +
        '(POST /api/v1/user/verification-mail {"login": "..."}, or "Send the mail again" on the sign-in page)',
    );
}

/** Refuses accounts that may not authenticate. */
/**
 * An inactive account is refused as an unknown credential is (401); one prohibited from logging in is 403, as Gitea
 * answers it (docs/gitea-dialect.md): the credential is right, the account may not use it.
 */
export function assertMayLogIn(row: Pick<AccountRow, 'active' | 'prohibit_login'>): void {
  if (!row.active) throw new NotAuthenticatedError('user is not active');
  if (row.prohibit_login) throw new NotAllowedError('user is prohibited from logging in');
}

/** Last use is recorded at most once a minute, so authentication stays one read on busy clients. */
const stale = (at: Date | null) => !at || Date.now() - new Date(at).getTime() > 60_000;

// Verifying against this keeps "no such user" as slow as "wrong password", so timing does not reveal logins; its
// password is random, so no password ever matches it and none is remembered as verified.
const DUMMY_HASH = hashPassword(randomBytes(32).toString('base64'));

/** The key an account's wrong passwords are counted under. */
export const failureKey = (id: number) => `id:${id}`;

/** Failed password checks per account: 10 in 15 minutes unless the app is configured otherwise. */
const DEFAULT_ACCOUNT_FAILURES = { max: 10, windowMs: 15 * 60_000 };

/**
 * Tokens another issuer vouches for, each standing for one of our accounts: Kubernetes ServiceAccount tokens bound
 * to service accounts (service-accounts/kubernetes-tokens.ts).
 */
export interface ForeignTokens {
  /** Whether a presented token is of this kind (then it is never looked up among the platform's own tokens). */
  recognizes(token: string): boolean;
  /** The account the issuer says the token stands for; undefined when it vouches for none of ours. */
  accountOf(token: string, call?: CallOptions): Promise<number | undefined>;
}

/** Token names: required, at most 255 characters (after trimming). */
function tokenName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 255)
    throw new InputError('name: required, at most 255 characters', [{ field: 'name', description: 'required, at most 255 characters' }]);
  return trimmed;
}

/** The Gitea scopes a token is made with, normalized; 400 naming those outside the vocabulary. */
function tokenAccessScopes(requested: readonly string[]): TokenAccessScope[] {
  const { scopes, unknown } = parseAccessScopes(requested);
  if (unknown.length)
    throw new InputError(`invalid access token scope: ${unknown.join(', ')} (known: ${TOKEN_ACCESS_SCOPES.join(', ')})`, [
      { field: 'scopes', description: `unknown: ${unknown.join(', ')}` },
    ]);
  return scopes;
}

/** A token's stored scopes (comma-separated, as Gitea stores them). */
const splitScopes = (stored: string | null | undefined): string[] => (stored ? stored.split(',') : ['all']);

/**
 * Inserts an access token of an account (a person's, or a service account's) and answers it with its plaintext,
 * which leaves only in this answer; 409 when the account already has a token of that name.
 */
export async function insertToken(
  db: Database,
  uid: number,
  name: string,
  opts: { scope?: string; scopeAccountId?: number; accessScopes?: readonly string[]; trx?: Knex.Transaction } = {},
): Promise<{ created: orgsTeamsV1.CreatedToken; createdAt: Date }> {
  const trimmed = tokenName(name);
  const accessScopes = tokenAccessScopes(opts.accessScopes ?? []);
  const token = generateToken();
  try {
    const [row] = await db
      .table('access_tokens', opts.trx)
      .insert({
        uid,
        name: trimmed,
        token_hash: hashToken(token),
        token_last_eight: token.slice(-8),
        scope: opts.scope ?? '',
        scope_account_id: opts.scopeAccountId || null,
        access_scopes: accessScopes.join(','),
      })
      .returning(['id', 'name', 'token_last_eight', 'created_at']);
    changed.accounts([uid]);
    return {
      created: { id: row.id, name: row.name, sha1: token, tokenLastEight: row.token_last_eight, accessScopes },
      createdAt: row.created_at,
    };
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`access token name "${trimmed}" is already used`);
    throw err;
  }
}

/** Accounts and personal access tokens, over the identity schema. */
export class Identity {
  constructor(
    private readonly db: Database,
    /** Wrong passwords per account (an unknown login counts under its name), checked before any password is hashed. */
    readonly passwordFailures = new FailureLimiter(DEFAULT_ACCOUNT_FAILURES),
    /** Tokens of other issuers that authenticate accounts of ours (none: only the platform's own tokens). */
    private readonly foreignTokens?: ForeignTokens,
    /** TOTP of local accounts; absent, passwords are the only factor (a test's identity service). */
    readonly secondFactor?: SecondFactor,
  ) {}

  private accounts() {
    return this.db.table<AccountRow>('accounts');
  }

  /**
   * Creates a user; validates login, email and password; 409 when login or email is taken. Its address counts as
   * verified unless `emailVerified` is false (self-registration): every other creation is a site admin's or the
   * platform's act, which vouches for it. With `trx`, within the caller's transaction.
   */
  async createUser(
    req: orgsTeamsV1.CreateUserRequest,
    opts: { emailVerified?: boolean; trx?: Knex.Transaction } = {},
  ): Promise<orgsTeamsV1.User> {
    const accounts = () => this.db.table<AccountRow>('accounts', opts.trx);
    const violations = [];
    if (!LOGIN.test(req.username)) violations.push({ field: 'username', description: LOGIN_RULE });
    if (!EMAIL.test(req.email)) violations.push({ field: 'email', description: 'not a valid email address' });
    if (req.password.length < MIN_PASSWORD_LENGTH)
      violations.push({ field: 'password', description: `at least ${MIN_PASSWORD_LENGTH} characters` });
    if (violations.length) throw new ValidationError(violations.map((v) => `${v.field}: ${v.description}`).join('; '), violations);

    const taken = await accounts()
      .where({ lower_login: req.username.toLowerCase() })
      .orWhere({ lower_email: req.email.toLowerCase() })
      .first('lower_login');
    if (taken) {
      throw new ConflictError(
        taken.lower_login === req.username.toLowerCase() ? `user ${req.username} already exists` : `email ${req.email} is already used`,
      );
    }
    try {
      const [row] = await accounts()
        .insert({
          type: ACCOUNT_TYPE.user,
          login: req.username,
          lower_login: req.username.toLowerCase(),
          full_name: req.fullName,
          email: req.email,
          lower_email: req.email.toLowerCase(),
          password_hash: await hashPassword(req.password),
          must_change_password: req.mustChangePassword,
          is_admin: req.isAdmin,
          email_verified: opts.emailVerified ?? true,
        })
        .returning('*');
      changed.accounts([row.id]);
      return toUser(row as AccountRow);
    } catch (err) {
      // A concurrent create won the race for the unique login or email.
      if (isUniqueViolation(err)) throw new ConflictError(`user ${req.username} or email ${req.email} already exists`);
      throw err;
    }
  }

  /**
   * Sets a user's password (the admin CLI's reset-password) and whether it must be changed at next sign-in;
   * answers the account as it was before (the old hash tells which earlier password it replaced).
   */
  async setPassword(login: string, password: string, mustChangePassword: boolean): Promise<AccountRow> {
    if (password.length < MIN_PASSWORD_LENGTH)
      throw new ValidationError(`password: at least ${MIN_PASSWORD_LENGTH} characters`, [
        { field: 'password', description: `at least ${MIN_PASSWORD_LENGTH} characters` },
      ]);
    const before = await this.accounts().where({ type: ACCOUNT_TYPE.user, lower_login: login.toLowerCase() }).first();
    if (!before) throw new NotFoundError(`user ${login} does not exist`);
    changed.accounts([before.id]);
    await this.accounts()
      .where({ id: before.id })
      .update({ password_hash: await hashPassword(password), must_change_password: mustChangePassword });
    return before;
  }

  /** Removes an account (used to undo a creation whose authorization tuple could not be written). */
  async deleteAccount(id: number): Promise<void> {
    changed.accounts([id]);
    await this.accounts().where({ id }).delete();
  }

  /**
   * Deletes a user nobody has used yet: no site admin, never signed in, in no organization, no token. It takes back a
   * creation that did not complete (a client organization's admin user); a user in use is never deleted (400).
   */
  async deleteUnusedUser(id: number): Promise<void> {
    await this.db.transaction(async (trx) => {
      const row = await this.db.table<AccountRow>('accounts', trx).where({ id, type: ACCOUNT_TYPE.user }).forUpdate().first();
      if (!row) throw new NotFoundError(`user ${id} does not exist`);
      const used =
        row.is_admin ||
        row.last_login_at !== null ||
        (await this.db.table('org_users', trx).where({ uid: id }).first()) !== undefined ||
        (await this.db.table('access_tokens', trx).where({ uid: id }).first()) !== undefined;
      if (used) throw new InputError(`user ${row.login} has been used; it is not deleted`);
      changed.accounts([id]);
      await this.db.table('accounts', trx).where({ id }).delete();
    });
  }

  async getUser(req: orgsTeamsV1.GetUserRequest): Promise<orgsTeamsV1.User> {
    const q = this.accounts().where({ type: ACCOUNT_TYPE.user });
    const row = req.id
      ? await q.andWhere({ id: req.id }).first(...USER_COLUMNS)
      : await q.andWhere({ lower_login: req.login.toLowerCase() }).first(...USER_COLUMNS);
    if (!row) throw new NotFoundError(`user ${req.login || req.id} does not exist`);
    return toUser(row);
  }

  /** The users among `ids`, in id order; ids of no user are left out. At most 1,000 ids. */
  async getUsers(ids: number[]): Promise<orgsTeamsV1.User[]> {
    if (ids.length > 1000) throw new InputError('at most 1000 ids at a time');
    if (ids.length === 0) return [];
    const rows = await this.accounts()
      .where({ type: ACCOUNT_TYPE.user })
      .whereIn('id', ids)
      .orderBy('id')
      .select(...USER_COLUMNS);
    return rows.map(toUser);
  }

  /** The accounts among `ids`, users and organizations alike (`type` tells them apart), in id order. At most 1,000 ids. */
  async getAccounts(ids: number[]): Promise<orgsTeamsV1.User[]> {
    if (ids.length > 1000) throw new InputError('at most 1000 ids at a time');
    if (ids.length === 0) return [];
    const rows = await this.accounts()
      .whereIn('id', ids)
      .orderBy('id')
      .select(...USER_COLUMNS);
    return rows.map(toUser);
  }

  /**
   * One page of the user accounts (never organizations) in id order, after `afterId`: at most `limit` (1..1000,
   * 0 for 500); the id to continue after, 0 on the last page. Keyset paging keeps every page one index range scan.
   */
  async listUserAccounts(afterId: number, limit: number): Promise<orgsTeamsV1.ListUserAccountsResponse> {
    if (limit < 0 || limit > 1000) throw new InputError('limit must be between 1 and 1000', [{ field: 'limit', description: '1..1000' }]);
    const size = limit || 500;
    // One row more than the page tells whether another page follows.
    const rows = await this.accounts()
      .where({ type: ACCOUNT_TYPE.user })
      .andWhere('id', '>', Math.max(0, afterId))
      .orderBy('id')
      .limit(size + 1)
      .select(...USER_COLUMNS);
    const page = rows.slice(0, size);
    return { users: page.map(toUser), nextAfterId: rows.length > size ? page[page.length - 1].id : 0 };
  }

  /**
   * The active account owning a token (a user, or a service account); 401 for unknown tokens and refused accounts.
   * A token of another issuer (ForeignTokens) is asked of that issuer, for the call given.
   */
  async authenticate(token: string, call?: CallOptions): Promise<orgsTeamsV1.AuthenticateResponse> {
    if (this.foreignTokens?.recognizes(token)) return this.authenticateForeign(token, call);
    const row = await this.db
      .table('access_tokens as t')
      .join('accounts as a', 'a.id', 't.uid')
      .where('t.token_hash', hashToken(token))
      .first(
        ...USER_COLUMNS.map((c) => `a.${c}`),
        't.id as token_id',
        't.last_used_at as token_last_used_at',
        't.scope as token_scope',
        't.scope_account_id as token_scope_account_id',
        't.access_scopes as token_access_scopes',
      );
    if (!row) throw new NotAuthenticatedError('invalid token');
    assertMayLogIn(row);
    if (stale(row.token_last_used_at)) {
      changed.signin([row.id]);
      await this.db.table('access_tokens').where({ id: row.token_id }).update({ last_used_at: this.db.knex.fn.now() });
    }
    if (stale(row.last_login_at)) await this.signedIn(row.id);
    return {
      user: toUser(row),
      tokenId: row.token_id,
      scope: row.token_scope,
      scopeAccountId: Number(row.token_scope_account_id ?? 0),
      accessScopes: splitScopes(row.token_access_scopes),
    };
  }

  /** Records an account's sign-in (its last sign-in is sign-in state: who its tokens belong to does not change). */
  async signedIn(id: number): Promise<void> {
    changed.signin([id]);
    await this.accounts().where({ id }).update({ last_login_at: this.db.knex.fn.now() });
  }

  /** A token another issuer vouches for: the service account it is bound to, when that account may authenticate. */
  private async authenticateForeign(token: string, call?: CallOptions): Promise<orgsTeamsV1.AuthenticateResponse> {
    const id = await this.foreignTokens!.accountOf(token, call);
    const row = id
      ? await this.accounts()
          .where({ id, type: ACCOUNT_TYPE.serviceAccount })
          .first(...USER_COLUMNS)
      : undefined;
    if (!row) throw new NotAuthenticatedError('invalid token');
    assertMayLogIn(row);
    if (stale(row.last_login_at)) await this.signedIn(row.id);
    return { user: toUser(row), tokenId: 0, scope: '', scopeAccountId: 0, accessScopes: ['all'] };
  }

  /**
   * HTTP Basic credentials (login or email, and password); 401 on any mismatch. An account with too many
   * wrong passwords in the window is refused with 429 and Retry-After before its password is checked, so a
   * guesser costs no scrypt work; a right password resets the account's count.
   */
  /** Whether `password` is this user's (undefined: no such user); not a sign-in, so nothing is recorded or counted. */
  async passwordMatches(login: string, password: string): Promise<boolean | undefined> {
    const row = await this.accounts().where({ type: ACCOUNT_TYPE.user, lower_login: login.toLowerCase() }).first('password_hash');
    return row ? verifyPassword(password, row.password_hash) : undefined;
  }

  async authenticateBasic(username: string, password: string, otp: string = ''): Promise<orgsTeamsV1.AuthenticateResponse> {
    const key = username.toLowerCase();
    const row = await this.accounts()
      .where({ type: ACCOUNT_TYPE.user })
      .andWhere((q) => q.where({ lower_login: key }).orWhere({ lower_email: key }))
      .first();
    // Login and email of one account share a count; an unknown name is counted (and refused) the same way.
    const account = row ? failureKey(row.id) : `name:${key}`;
    const stored = row?.password_hash ?? (await DUMMY_HASH);
    // The attempt holds its place against the limit before anything is checked, so concurrent guesses check no
    // more than the limit (attempts of one password share a place); whatever ends it other than a wrong password or
    // code gives the place back.
    const attempt = this.passwordFailures.reserve(account, 'too many failed sign-in attempts for this account', PASSWORD_VERIFIER.guess(password, stored, account));
    try {
      // An account with failures counted waits behind those without, so a flood of guesses does not hold up the others;
      // checks share a derivation per account, so unknown names (one dummy hash) behave as accounts do.
      const ok = await verifyPassword(password, stored, { priority: this.passwordFailures.failures(account) === 0, who: account });
      if (!row || !ok) {
        // A failure may lock the account out, which the site admin's list of users shows.
        changed.signin([row?.id]);
        attempt.fail();
        throw new NotAuthenticatedError('invalid username or password');
      }
      if (this.secondFactor) {
        try {
          await this.secondFactor.checkSignIn(row.id, otp);
        } catch (err) {
          // A wrong code counts as a wrong password would (codes are guessable too); a missing one is a client asking
          // for the next step, not a guess.
          if (otp.trim() && err instanceof NotAuthenticatedError) {
            changed.signin([row.id]);
            attempt.fail();
          }
          throw err;
        }
      }
      attempt.succeed();
    } finally {
      attempt.release();
    }
    assertMayLogIn(row);
    await assertAddressTrusted(this.db, row);
    // At most once a minute, as a token's use: Basic credentials may sign in every request (docs/gitea-dialect.md).
    if (stale(row.last_login_at)) await this.signedIn(row.id);
    const user = toUser(row);
    if (this.secondFactor) user.mustEnrollTwoFactor = await this.secondFactor.mustEnroll(user);
    return { user, tokenId: 0, scope: '', scopeAccountId: 0, accessScopes: [] };
  }

  /**
   * Issues a token; the plaintext leaves only in this answer. A scoped token (TOKEN_SCOPES) is limited to that
   * one use and acts for `scopeAccountId` (docs/authentication.md); the gateway enforces the scope.
   */
  async createToken(
    userId: number,
    name: string,
    scope = '',
    scopeAccountId = 0,
    accessScopes: readonly string[] = [],
  ): Promise<orgsTeamsV1.CreatedToken> {
    tokenName(name);
    tokenAccessScopes(accessScopes);
    if (scope && !TOKEN_SCOPES.includes(scope))
      throw new InputError(`scope: must be one of ${TOKEN_SCOPES.join(', ')}`, [{ field: 'scope', description: 'unknown scope' }]);
    if (scope && !scopeAccountId)
      throw new InputError('scope_account_id: a scoped token acts for an account', [
        { field: 'scope_account_id', description: 'required with a scope' },
      ]);
    if (!scope && scopeAccountId)
      throw new InputError('scope_account_id: only a scoped token acts for another account', [
        { field: 'scope_account_id', description: 'only with a scope' },
      ]);
    // A service account's tokens are made by those who administer it, never by the account itself (a license proxy's).
    const owner = await this.accounts().where({ id: userId }).first('type');
    if (owner?.type === ACCOUNT_TYPE.serviceAccount) throw new NotAllowedError("a service account's tokens are made by its administrators");
    return (await insertToken(this.db, userId, name, { scope, scopeAccountId, accessScopes })).created;
  }

  async listTokens(userId: number): Promise<orgsTeamsV1.TokenInfo[]> {
    const rows = await this.db.table('access_tokens').where({ uid: userId }).orderBy('id');
    type Row = {
      id: number;
      name: string;
      token_last_eight: string;
      created_at: Date;
      last_used_at: Date | null;
      scope: string;
      scope_account_id: number | null;
      access_scopes: string;
    };
    return rows.map((r: Row) => ({
      id: r.id,
      name: r.name,
      tokenLastEight: r.token_last_eight,
      createdUnix: unixSeconds(r.created_at),
      lastUsedUnix: unixSeconds(r.last_used_at),
      scope: r.scope,
      scopeAccountId: Number(r.scope_account_id ?? 0),
      accessScopes: splitScopes(r.access_scopes),
    }));
  }

  async deleteToken(userId: number, id: number): Promise<void> {
    changed.accounts([userId]);
    const n = await this.db.table('access_tokens').where({ uid: userId, id }).delete();
    if (n === 0) throw new NotFoundError(`access token ${id} does not exist`);
  }

  /**
   * Deletes every access token and console session of a user at once (a person who left, or a stolen device): its
   * call's announcement tells the gateways, so both stop on the next request.
   */
  async revokeCredentials(login: string): Promise<{ userId: number; tokens: number; sessions: number }> {
    const row = await this.accounts().where({ type: ACCOUNT_TYPE.user, lower_login: login.toLowerCase() }).first('id');
    if (!row) throw new NotFoundError(`user ${login} does not exist`);
    changed.accounts([row.id]);
    return this.db.transaction(async (trx) => ({
      userId: Number(row.id),
      tokens: await this.db.table('access_tokens', trx).where({ uid: row.id }).delete(),
      sessions: await this.db.table('sessions', trx).where({ uid: row.id }).delete(),
    }));
  }

  /** Ids of the site admins (none only before the first start completed). */
  async siteAdminIds(): Promise<number[]> {
    return this.accounts().where({ type: ACCOUNT_TYPE.user, is_admin: true }).orderBy('id').pluck('id');
  }
}
