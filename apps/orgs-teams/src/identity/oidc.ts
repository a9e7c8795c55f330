import { randomBytes } from 'node:crypto';
import { ConflictError, NotAllowedError, NotFoundError } from '@platform/errors';
import { isUniqueViolation, unixSeconds, type Database } from '@platform/db';
import type { orgsTeamsV1 } from '@platform/proto';
import { ACCOUNT_TYPE, LOGIN, type AccountRow, type Identity } from './identity';
import { assertRegistrationOpen, type Sessions } from './sessions';
import { changed } from '../changes';

/** What a person's groups change, applied after every sign-in through the provider (group-mappings.ts). */
export type GroupSync = (userId: number, groups: string[]) => Promise<void>;

/**
 * Single sign-on through the site's OpenID provider (docs/authentication.md, "Single sign-on (OIDC)"). The gateway
 * runs the code flow and validates the ID token; this finds the account: by the provider's (issuer, subject) once
 * linked; else, only when the provider vouches for the e-mail (`email_verified`, or the site trusts its e-mails), the
 * account of that e-mail if its own address is verified and no other subject of the provider holds it (linked then,
 * once), or a new account as registration permits. A person is never matched by name, nor by an e-mail the provider
 * has not verified, nor to an account whose address nobody proved: each would let whoever can choose those take over
 * a platform account. Otherwise an account is linked only by its owner's own act (`link`), signed in.
 */
export class ExternalSignIn {
  constructor(
    private readonly db: Database,
    private readonly identity: Identity,
    private readonly sessions: Sessions,
    private readonly groupSync?: GroupSync,
  ) {}

  async signIn(req: orgsTeamsV1.SignInExternalRequest): Promise<orgsTeamsV1.SignInExternalResponse> {
    if (!req.issuer || !req.subject) throw new NotAllowedError('the identity provider named no subject');
    let matchedBy = 'linked';
    let account = await this.linked(req.issuer, req.subject);
    if (!account) {
      if (!req.email) throw new NotAllowedError('the identity provider did not tell an e-mail address; an account cannot be made');
      if (!req.emailVerified)
        throw new NotAllowedError(
          `the identity provider has not verified your e-mail address ${req.email}, so it is not trusted here: verify it at the ` +
            'identity provider, or sign in with your password and link the provider from your account page',
        );
      account = await this.db
        .table<AccountRow>('accounts')
        .where({ type: ACCOUNT_TYPE.user, lower_email: req.email.toLowerCase() })
        .first();
      if (account) {
        matchedBy = 'email';
        await this.linkByEmail(req, account);
      } else {
        matchedBy = 'created';
        account = await this.create(req);
      }
    }
    if (!account.active) throw new NotAllowedError('user is not active');
    if (account.prohibit_login) throw new NotAllowedError('user is prohibited from logging in');
    await this.groupSync?.(account.id, req.groups);
    const session = await this.sessions.create(account.id, req.userAgent, req.address);
    changed.accounts([account.id]);
    await this.db.table('accounts').where({ id: account.id }).update({ last_login_at: this.db.knex.fn.now() });
    return { session, matchedBy };
  }

  /** First sign-in by a vouched e-mail: linked only to an account whose own address is proven and not yet linked. */
  private async linkByEmail(req: orgsTeamsV1.SignInExternalRequest, account: AccountRow): Promise<void> {
    const refuse = (why: string) =>
      new NotAllowedError(
        `an account with the e-mail ${req.email} exists, but ${why}, so you are not signed in to it: sign in with its ` +
          'password and link the provider from your account page',
      );
    if (!account.email_verified) throw refuse('its own address has not been verified');
    const other = await this.db.table('external_identities').where({ issuer: req.issuer, uid: account.id }).first('subject');
    if (other) throw refuse('it is linked to another account at this identity provider');
    try {
      await this.db.table('external_identities').insert({ issuer: req.issuer, subject: req.subject, uid: account.id });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // The same person's concurrent first sign-in linked it already; anyone else's link wins and this one is refused.
      if ((await this.linked(req.issuer, req.subject))?.id !== account.id)
        throw refuse('it is linked to another account at this identity provider');
    }
  }

  /**
   * Links the provider's subject to a signed-in user: the account owner's explicit act, which proves both sides. 409
   * when the subject is another account's, or the user has another subject of that provider (unlink it first).
   */
  async link(userId: number, issuer: string, subject: string): Promise<orgsTeamsV1.ExternalIdentity> {
    if (!issuer || !subject) throw new NotAllowedError('the identity provider named no subject');
    const current = await this.linked(issuer, subject);
    if (current && current.id !== userId)
      throw new ConflictError('this identity provider account is already linked to another platform account');
    if (!current) {
      const other = await this.db.table('external_identities').where({ issuer, uid: userId }).first('subject');
      if (other) throw new ConflictError('your account is already linked to another account at this identity provider: unlink it first');
      try {
        await this.db.table('external_identities').insert({ issuer, subject, uid: userId });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        if ((await this.linked(issuer, subject))?.id !== userId)
          throw new ConflictError('this identity provider account was linked elsewhere at the same time');
      }
    }
    return (await this.list(userId)).find((x) => x.issuer === issuer)!;
  }

  /** The provider subjects linked to a user. */
  async list(userId: number): Promise<orgsTeamsV1.ExternalIdentity[]> {
    const rows: { issuer: string; subject: string; created_at: Date }[] = await this.db
      .table('external_identities')
      .where({ uid: userId })
      .orderBy('issuer')
      .select('issuer', 'subject', 'created_at');
    return rows.map((r) => ({ issuer: r.issuer, subject: r.subject, createdUnix: unixSeconds(r.created_at) }));
  }

  /** Removes the user's link to the provider; 404 when there is none. */
  async unlink(userId: number, issuer: string): Promise<void> {
    const n = await this.db.table('external_identities').where({ uid: userId, issuer }).delete();
    if (n === 0) throw new NotFoundError('your account is not linked to this identity provider');
  }

  private async linked(issuer: string, subject: string): Promise<AccountRow | undefined> {
    return this.db
      .table('external_identities as x')
      .join('accounts as a', 'a.id', 'x.uid')
      .where({ 'x.issuer': issuer, 'x.subject': subject })
      .first('a.*');
  }

  /** A new account for a person the platform does not know, as self-registration would allow it. */
  private async create(req: orgsTeamsV1.SignInExternalRequest): Promise<AccountRow> {
    if (!req.email) throw new NotAllowedError('the identity provider did not tell an e-mail address; an account cannot be made');
    const existing = await this.db.table('accounts').where({ lower_email: req.email.toLowerCase() }).first('id');
    if (existing)
      throw new NotAllowedError(`the e-mail ${req.email} belongs to an account that is not a person's; an account cannot be made`);
    await assertRegistrationOpen(this.db, req.email);
    const login = await this.freeLogin(req.username || req.email.slice(0, req.email.indexOf('@')));
    // No one knows this password: the account signs in through the provider (a site admin may set one later).
    const user = await this.identity.createUser({
      username: login,
      email: req.email,
      password: randomBytes(32).toString('base64url'),
      fullName: req.fullName.slice(0, 255),
      mustChangePassword: false,
      isAdmin: false,
    });
    try {
      await this.db.table('external_identities').insert({ issuer: req.issuer, subject: req.subject, uid: user.id });
    } catch (err) {
      await this.identity.deleteAccount(user.id);
      if (isUniqueViolation(err)) throw new ConflictError('this person signed in at the same time from elsewhere; try again');
      throw err;
    }
    return (await this.db.table<AccountRow>('accounts').where({ id: user.id }).first())!;
  }

  /** The wanted login made valid (other characters become "-"), with a number added while it is taken. */
  private async freeLogin(wanted: string): Promise<string> {
    const trim = (v: string) => v.replace(/^[^a-zA-Z0-9]+|[^a-zA-Z0-9]+$/g, '');
    let base = trim(trim(wanted.replace(/[^a-zA-Z0-9._-]+/g, '-')).slice(0, 34));
    if (!LOGIN.test(base)) base = 'user';
    for (let n = 1; n < 1000; n++) {
      const login = n === 1 ? base : `${base}-${n}`;
      const taken = await this.db.table('accounts').where({ lower_login: login.toLowerCase() }).first('id');
      if (!taken) return login;
    }
    return `${base}-${randomBytes(3).toString('hex')}`;
  }
}
