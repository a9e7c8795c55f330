import { randomBytes } from 'node:crypto';
import { ConflictError, NotAllowedError } from '@platform/errors';
import { isUniqueViolation, type Database } from '@platform/db';
import type { orgsTeamsV1 } from '@platform/proto';
import { ACCOUNT_TYPE, LOGIN, type AccountRow, type Identity } from './identity';
import { assertRegistrationOpen, type Sessions } from './sessions';

/** What a person's groups change, applied after every sign-in through the provider (group-mappings.ts). */
export type GroupSync = (userId: number, groups: string[]) => Promise<void>;

/**
 * Single sign-on through the site's OpenID provider (docs/authentication.md, "Single sign-on (OIDC)"). The gateway
 * runs the code flow and validates the ID token; this finds the account: by the provider's (issuer, subject) once
 * linked, else by a verified e-mail (linked then, once), else a new account as registration permits. A person is never
 * matched by name, nor by an e-mail the provider has not verified: either would let anyone who can choose those at the
 * provider take over a platform account.
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
    if (!account && req.email && req.emailVerified) {
      account = await this.db
        .table<AccountRow>('accounts')
        .where({ type: ACCOUNT_TYPE.user, lower_email: req.email.toLowerCase() })
        .first();
      if (account) {
        matchedBy = 'email';
        await this.link(req.issuer, req.subject, account.id);
      }
    }
    if (!account) {
      matchedBy = 'created';
      account = await this.create(req);
    }
    if (!account.active) throw new NotAllowedError('user is not active');
    if (account.prohibit_login) throw new NotAllowedError('user is prohibited from logging in');
    await this.groupSync?.(account.id, req.groups);
    const session = await this.sessions.create(account.id, req.userAgent, req.address);
    await this.db.table('accounts').where({ id: account.id }).update({ last_login_at: this.db.knex.fn.now() });
    return { session, matchedBy };
  }

  private async linked(issuer: string, subject: string): Promise<AccountRow | undefined> {
    return this.db
      .table('external_identities as x')
      .join('accounts as a', 'a.id', 'x.uid')
      .where({ 'x.issuer': issuer, 'x.subject': subject })
      .first('a.*');
  }

  private async link(issuer: string, subject: string, uid: number): Promise<void> {
    try {
      await this.db.table('external_identities').insert({ issuer, subject, uid });
    } catch (err) {
      // A concurrent first sign-in of the same person linked it already.
      if (!isUniqueViolation(err)) throw err;
    }
  }

  /** A new account for a person the platform does not know, as self-registration would allow it. */
  private async create(req: orgsTeamsV1.SignInExternalRequest): Promise<AccountRow> {
    if (!req.email) throw new NotAllowedError('the identity provider did not tell an e-mail address; an account cannot be made');
    const existing = await this.db.table('accounts').where({ lower_email: req.email.toLowerCase() }).first('id');
    if (existing)
      throw new NotAllowedError(
        `an account with the e-mail ${req.email} exists, but the identity provider has not verified that address, so it is not linked`,
      );
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
