import type { Knex } from 'knex';
import { ConflictError, NotAllowedError, NotFoundError, ValidationError, type FieldViolation } from '@platform/errors';
import {
  isUniqueViolation,
  pageOf,
  pageOfQuery,
  type Database,
  type EffectHandler,
  type Outbox,
  type PageLimits,
  type StageEffect,
} from '@platform/db';
import type { orgsTeamsV1 } from '@platform/proto';
import { TEXT_LIMITS, type CallContext } from '@platform/service-kit';
import { changed } from '../changes';
import { containing } from '../like';
import { reconcileTuples, stageTuples } from '../orgs/effects';
import type { OrgAuthz } from '../orgs/org-authz';
import { OWNER_PERMISSION } from '../orgs/rows';
import { teamMember } from '../orgs/tuples';
import { tupleKey, type Tuple } from '../relationships';
import { ACCOUNT_TYPE, failureKey, MIN_PASSWORD_LENGTH, toUser, USER_COLUMNS, type AccountRow, type Identity } from '../identity/identity';
import { hashPassword, verifyPassword } from '../identity/passwords';
import type { UserAdministration } from '../identity/service';
import { SITE_OBJECT } from '../identity/site-admin';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** Gitea's diff view styles. */
const DIFF_VIEW_STYLES = ['unified', 'split'];
const MAX_THEME = 64;
const MAX_LANGUAGE = 16;
const MAX_LOGIN_NAME = 255;
/** 30 users a search answers unless asked, at most 1000; a limit outside is refused, as it always was. */
const SEARCH_PAGES: PageLimits = { defaultLimit: 30, maxLimit: 1000, outside: 'refuse' };

/** The outbox effect bringing users' site-admin tuples in line with their rows. */
export const USER_SITE_ADMIN_TUPLES = 'authz.user-site-admin';

const siteAdminTuple = (uid: number): Tuple => ({ user: `user:${uid}`, relation: 'admin', object: SITE_OBJECT });

/** Which of these site-admin tuples the rows call for: the user exists and is a site admin. */
async function siteAdminTuplesCalledFor(db: Database, tuples: Tuple[]): Promise<Set<string>> {
  const ids = tuples.map((t) => Number(/^user:(\d+)$/.exec(t.user)?.[1] ?? 0));
  const admins: number[] = await db.table('accounts').whereIn('id', ids).where({ type: ACCOUNT_TYPE.user, is_admin: true }).pluck('id');
  return new Set(admins.map((id) => tupleKey(siteAdminTuple(Number(id)))));
}

/** The handler of the site-admin effect: applied late or twice it still leaves the tuples matching the rows. */
export function userAdminEffects(db: Database, authz: Pick<OrgAuthz, 'write'>): Record<string, EffectHandler<{ tuples: Tuple[] }>> {
  return {
    [USER_SITE_ADMIN_TUPLES]: {
      apply: (c, call) => reconcileTuples(db, authz, c.tuples, call, siteAdminTuplesCalledFor),
      // Applied again after an undo put the row back, it brings the tuple back in line with it.
      invert: (c) => c,
    },
  };
}

/** What user administration needs of the organizations: deleting one inside the user's deletion. */
export interface OrgRemoval {
  deleteWithin(trx: Knex.Transaction, stage: StageEffect, orgId: number): Promise<void>;
  /** The administrative organization's slug, never deleted with a user. */
  adminOrg?: string;
}

function refuse(field: string, description: string): never {
  throw new ValidationError(`${field}: ${description}`, [{ field, description }]);
}

function checkLength(violations: FieldViolation[], field: string, value: string | undefined, max: number): void {
  if (value !== undefined && value.length > max) violations.push({ field, description: `at most ${max} characters` });
}

function assertValid(violations: FieldViolation[]): void {
  if (violations.length) throw new ValidationError(violations.map((v) => `${v.field}: ${v.description}`).join('; '), violations);
}

/**
 * Site admins' administration of users (Gitea's /admin/users) and a user's own account settings and password
 * (docs/authentication.md). Changes that reach authz (the site-admin tuple, the memberships of a deleted user) go
 * through the outbox with their rows; every change of an account is recorded where it is written (changes.ts), so a
 * cached token cannot outlive a change that makes it too strong.
 */
export class UserAdmin implements UserAdministration {
  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly identity: Identity,
    private readonly orgs: OrgRemoval,
  ) {}

  private users(trx?: Knex.Transaction) {
    return this.db.table<AccountRow>('accounts', trx).where({ type: ACCOUNT_TYPE.user });
  }

  /** The user with its lockout, as site admins see it. */
  private withLockout(user: orgsTeamsV1.User): orgsTeamsV1.User {
    const wait = this.identity.passwordFailures.retryAfterSeconds(failureKey(user.id));
    return { ...user, signInLockedUntilUnix: wait ? Math.floor(Date.now() / 1000) + wait : 0 };
  }

  async search(req: orgsTeamsV1.SearchUsersRequest): Promise<orgsTeamsV1.SearchUsersResponse> {
    const page = pageOf(req, SEARCH_PAGES);
    const q = this.users();
    if (req.uid) q.andWhere({ id: req.uid });
    if (req.loginName) {
      // Local users sign in with their login: it is their sign-in name when they have no other.
      q.andWhereRaw(`lower(case when login_name = '' then login else login_name end) = ?`, [req.loginName.toLowerCase()]);
    }
    if (req.q) {
      const like = containing(req.q.toLowerCase());
      q.andWhere((w) => {
        w.where('lower_login', 'like', like).orWhereRaw('lower(full_name) like ?', [like]);
        if (req.matchEmail) w.orWhere('lower_email', 'like', like);
      });
    }
    const { rows, total } = await pageOfQuery<AccountRow>(q, page, (r) => r.orderBy('id').select(...USER_COLUMNS));
    const users: orgsTeamsV1.User[] = rows.map(toUser);
    return { users: req.withLockout ? users.map((u) => this.withLockout(u)) : users, total };
  }

  /** 422 when no other active site admin who may sign in would remain besides `uid`. */
  private async assertAnotherAdmin(uid: number, trx: Knex.Transaction, what: string): Promise<void> {
    const other = await this.db
      .table('accounts', trx)
      .whereIn('type', [ACCOUNT_TYPE.user, ACCOUNT_TYPE.serviceAccount])
      .where({ is_admin: true, active: true, prohibit_login: false })
      .whereNot({ id: uid })
      .first('id');
    if (!other) throw new ValidationError(`${what} would leave the site without an admin who can sign in`);
  }

  async edit(req: orgsTeamsV1.EditUserRequest, ctx: CallContext): Promise<orgsTeamsV1.User> {
    const violations: FieldViolation[] = [];
    if (req.email !== undefined && (!EMAIL.test(req.email) || req.email.length > TEXT_LIMITS.email))
      violations.push({ field: 'email', description: 'not a valid email address' });
    if (req.password !== undefined && req.password.length < MIN_PASSWORD_LENGTH)
      violations.push({ field: 'password', description: `at least ${MIN_PASSWORD_LENGTH} characters` });
    checkLength(violations, 'password', req.password, TEXT_LIMITS.password);
    checkLength(violations, 'full_name', req.fullName, TEXT_LIMITS.fullName);
    checkLength(violations, 'login_name', req.loginName, MAX_LOGIN_NAME);
    checkLength(violations, 'website', req.website, TEXT_LIMITS.website);
    checkLength(violations, 'location', req.location, TEXT_LIMITS.location);
    checkLength(violations, 'description', req.description, TEXT_LIMITS.description);
    assertValid(violations);
    // Hashed before the transaction: scrypt's tens of milliseconds are not spent holding the row's lock.
    const passwordHash = req.password !== undefined ? await hashPassword(req.password) : undefined;

    let changes: Partial<AccountRow> = {};
    const before = await this.unique(() =>
      this.outbox.run(
        async (trx, stage) => {
          const row = await this.users(trx).andWhere({ lower_login: req.login.toLowerCase() }).forUpdate().first();
          if (!row) throw new NotFoundError(`user ${req.login} does not exist`);
          const losesAdmin = row.is_admin && (req.admin === false || req.active === false || req.prohibitLogin === true);
          if (losesAdmin && row.id === req.editorId)
            throw new ValidationError('you cannot take away your own site admin rights or sign-in; ask another site admin');
          if (losesAdmin) await this.assertAnotherAdmin(row.id, trx, `changing ${row.login}`);
          if (req.email !== undefined && req.email.toLowerCase() !== row.lower_email) {
            const taken = await this.db
              .table('accounts', trx)
              .where({ lower_email: req.email.toLowerCase() })
              .whereNot({ id: row.id })
              .first('id');
            if (taken) throw new ConflictError(`email ${req.email} is already used`);
          }
          changes = {
            // A site admin setting the address vouches for it: it counts as verified (docs/authentication.md).
            ...(req.email !== undefined && { email: req.email, lower_email: req.email.toLowerCase(), email_verified: true }),
            ...(req.fullName !== undefined && { full_name: req.fullName }),
            ...(passwordHash !== undefined && { password_hash: passwordHash }),
            ...(req.mustChangePassword !== undefined && { must_change_password: req.mustChangePassword }),
            ...(req.admin !== undefined && { is_admin: req.admin }),
            ...(req.active !== undefined && { active: req.active }),
            ...(req.prohibitLogin !== undefined && { prohibit_login: req.prohibitLogin }),
            ...(req.allowCreateOrganization !== undefined && { allow_create_organization: req.allowCreateOrganization }),
            ...(req.loginName !== undefined && { login_name: req.loginName }),
            ...(req.website !== undefined && { website: req.website }),
            ...(req.location !== undefined && { location: req.location }),
            ...(req.description !== undefined && { description: req.description }),
          };
          // Deactivated, prohibited, demoted or given a new password: a token kept with the old account must not outlive it.
          changed.accounts([row.id]);
          if (Object.keys(changes).length) await this.users(trx).andWhere({ id: row.id }).update(changes);
          // A user who may no longer sign in loses its console sessions for good, not only while it stays so; one given a
          // new password by an admin loses them too (whoever knew the old one may have signed in with it).
          if (req.active === false || req.prohibitLogin === true || passwordHash !== undefined)
            await this.db.table('sessions', trx).where({ uid: row.id }).delete();
          if (req.admin !== undefined && req.admin !== row.is_admin) stage(USER_SITE_ADMIN_TUPLES, { tuples: [siteAdminTuple(row.id)] });
          return row;
        },
        {
          call: ctx,
          // The site-admin tuple could not be written: the row goes back to what it was, so none of the edit holds.
          undo: async (trx, row) => {
            const restored = Object.fromEntries(Object.keys(changes).map((k) => [k, row[k as keyof AccountRow]]));
            await this.users(trx).andWhere({ id: row.id }).update(restored);
          },
        },
      ),
    );
    // A new password lifts the lockout its guessers caused.
    if (passwordHash !== undefined) this.identity.passwordFailures.reset(failureKey(before.id));
    return this.withLockout(await this.identity.getUser({ id: before.id, login: '' }));
  }

  /** A change whose concurrent twin may win the unique email: that is a conflict, as the check before it says. */
  private async unique<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError('the email was taken meanwhile');
      throw err;
    }
  }

  /** The organizations whose owner team has no one but `uid` (counted after the teams are locked). */
  private async ownedAlone(uid: number, trx: Knex.Transaction): Promise<{ id: number; login: string }[]> {
    const teams = await this.db
      .table('teams as t', trx)
      .join('team_users as m', 'm.team_id', 't.id')
      .where({ 'm.uid': uid, 't.permission': OWNER_PERMISSION })
      .forUpdate('t')
      .select('t.id', 't.org_id');
    if (!teams.length) return [];
    // Counted in a statement of its own after the lock, so it sees an owner removed by a change that held it.
    const counts = await this.db
      .table('team_users', trx)
      .whereIn(
        'team_id',
        teams.map((t: { id: number }) => t.id),
      )
      .groupBy('team_id')
      .select('team_id')
      .count<{ team_id: number; count: string }[]>('uid as count');
    const alone = new Set(counts.filter((c) => Number(c.count) === 1).map((c) => Number(c.team_id)));
    const orgIds = teams.filter((t: { id: number }) => alone.has(Number(t.id))).map((t: { org_id: number }) => Number(t.org_id));
    if (!orgIds.length) return [];
    return this.db.table('accounts', trx).whereIn('id', orgIds).orderBy('lower_login').select('id', 'login');
  }

  async delete(req: orgsTeamsV1.DeleteUserRequest, ctx: CallContext): Promise<orgsTeamsV1.DeleteUserResponse> {
    const deleted = await this.outbox.run(
      async (trx, stage) => {
        const row = await this.users(trx).andWhere({ lower_login: req.login.toLowerCase() }).forUpdate().first();
        if (!row) throw new NotFoundError(`user ${req.login} does not exist`);
        if (row.id === req.deleterId) throw new ValidationError('you cannot delete yourself; ask another site admin');
        if (row.is_admin) await this.assertAnotherAdmin(row.id, trx, `deleting ${row.login}`);
        const owned = await this.ownedAlone(row.id, trx);
        const names = owned.map((o) => o.login).join(', ');
        if (owned.length && !req.purge)
          throw new ValidationError(
            `user ${row.login} is the last owner of ${names}: give each another owner or delete it first, or delete the user with purge`,
          );
        const adminOrg = this.orgs.adminOrg?.toLowerCase();
        if (owned.some((o) => o.login.toLowerCase() === adminOrg))
          throw new ValidationError(
            `user ${row.login} is the last owner of the administrative organization ${this.orgs.adminOrg}, which is never deleted`,
          );
        for (const org of owned) await this.orgs.deleteWithin(trx, stage, org.id);
        const memberships: { team_id: number; uid: number }[] = await this.db.table('team_users', trx).where({ uid: row.id });
        // Tokens, memberships and the rest the user keeps go with the row (foreign keys); their tuples follow.
        changed.accounts([row.id]);
        await this.db.table('accounts', trx).where({ id: row.id }).delete();
        stageTuples(
          stage,
          memberships.map((m) => teamMember(Number(m.team_id), row.id)),
        );
        if (row.is_admin) stage(USER_SITE_ADMIN_TUPLES, { tuples: [siteAdminTuple(row.id)] });
        return { id: row.id, orgIds: owned.map((o) => Number(o.id)) };
      },
      { call: ctx },
    );
    this.identity.passwordFailures.reset(failureKey(deleted.id));
    return { deletedOrgIds: deleted.orgIds };
  }

  async editSettings(req: orgsTeamsV1.EditUserSettingsRequest): Promise<orgsTeamsV1.User> {
    const violations: FieldViolation[] = [];
    checkLength(violations, 'full_name', req.fullName, TEXT_LIMITS.fullName);
    checkLength(violations, 'website', req.website, TEXT_LIMITS.website);
    checkLength(violations, 'location', req.location, TEXT_LIMITS.location);
    checkLength(violations, 'description', req.description, TEXT_LIMITS.description);
    checkLength(violations, 'language', req.language, MAX_LANGUAGE);
    checkLength(violations, 'theme', req.theme, MAX_THEME);
    if (req.diffViewStyle !== undefined && req.diffViewStyle !== '' && !DIFF_VIEW_STYLES.includes(req.diffViewStyle))
      violations.push({ field: 'diff_view_style', description: `one of ${DIFF_VIEW_STYLES.join(', ')}` });
    assertValid(violations);
    const changes = {
      ...(req.fullName !== undefined && { full_name: req.fullName }),
      ...(req.website !== undefined && { website: req.website }),
      ...(req.description !== undefined && { description: req.description }),
      ...(req.location !== undefined && { location: req.location }),
      ...(req.language !== undefined && { language: req.language }),
      ...(req.theme !== undefined && { theme: req.theme }),
      ...(req.diffViewStyle !== undefined && { diff_view_style: req.diffViewStyle }),
      ...(req.hideEmail !== undefined && { hide_email: req.hideEmail }),
      ...(req.hideActivity !== undefined && { hide_activity: req.hideActivity }),
    };
    if (Object.keys(changes).length) {
      // Kept with the token, the caller's own answers (GET /user) show the new settings at once.
      changed.accounts([req.userId]);
      const n = await this.users().andWhere({ id: req.userId }).update(changes);
      if (n === 0) throw new NotFoundError(`user ${req.userId} does not exist`);
    }
    return this.identity.getUser({ id: req.userId, login: '' });
  }

  /**
   * The old password is checked as a sign-in is: refused while the account is locked, a wrong one counted toward
   * the lockout, so a stolen token cannot be used to guess the password without limit.
   */
  async changePassword(req: orgsTeamsV1.ChangePasswordRequest): Promise<void> {
    const violations: FieldViolation[] = [];
    if (req.newPassword.length < MIN_PASSWORD_LENGTH)
      violations.push({ field: 'new_password', description: `at least ${MIN_PASSWORD_LENGTH} characters` });
    checkLength(violations, 'new_password', req.newPassword, TEXT_LIMITS.password);
    assertValid(violations);
    const row = await this.users().andWhere({ id: req.userId }).first('id', 'password_hash');
    if (!row?.password_hash) throw new NotFoundError('this account has no password');
    const key = failureKey(row.id);
    const attempt = this.identity.passwordFailures.reserve(key, 'too many failed sign-in attempts for this account');
    try {
      if (!(await verifyPassword(req.oldPassword, row.password_hash))) {
        changed.signin([row.id]);
        attempt.fail();
        throw new NotAllowedError('the old password is wrong');
      }
      attempt.succeed();
    } finally {
      attempt.release();
    }
    if (req.newPassword === req.oldPassword) refuse('new_password', 'must differ from the old password');
    const passwordHash = await hashPassword(req.newPassword);
    changed.accounts([row.id]);
    await this.db.transaction(async (trx) => {
      await this.users(trx).andWhere({ id: row.id }).update({ password_hash: passwordHash, must_change_password: false });
      // Whoever knew the old password may have signed in with it: every other console session ends.
      await this.db.table('sessions', trx).where({ uid: row.id }).whereNot({ id: req.keepSessionId }).delete();
    });
  }

  async clearLockout(login: string): Promise<void> {
    const row = await this.users().andWhere({ lower_login: login.toLowerCase() }).first('id');
    if (!row) throw new NotFoundError(`user ${login} does not exist`);
    changed.signin([row.id]);
    this.identity.passwordFailures.reset(failureKey(row.id));
  }
}
