import type { Knex } from 'knex';
import { ConflictError, InputError, NotFoundError, ValidationError } from '@platform/errors';
import { isUniqueViolation, unixSeconds, type Database, type Outbox, type StageEffect } from '@platform/db';
import type { orgsTeamsV1, serviceAccountsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import { changed } from '../changes';
import { ACCOUNT_TYPE, insertToken, LOGIN, LOGIN_RULE } from '../identity/identity';
import type { OrgAuthz } from '../orgs/org-authz';
import type { KubernetesSubject } from './kubernetes-tokens';
import { ServiceAccountsStore, type ServiceAccountDetails, type ServiceAccountRow } from './service-accounts-store';
import { changedTuples, stageServiceAccountTuples, tuplesOf } from './tuples';

/** Most custom roles, and most Kubernetes subjects, one service account may hold. */
export const MAX_SERVICE_ACCOUNT_ROLES = 50;
export const MAX_KUBERNETES_SUBJECTS = 50;
const MAX_DESCRIPTION = 255;

/** A namespace is a DNS label; a ServiceAccount's name a DNS subdomain (Kubernetes' own rules). */
const DNS_LABEL = '[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?';
const SUBJECT = new RegExp(`^(${DNS_LABEL})/(${DNS_LABEL}(?:\\.${DNS_LABEL})*)$`);

/** `<namespace>/<name>` of a subject. */
export const subjectText = (s: KubernetesSubject) => `${s.namespace}/${s.name}`;

function invalid(field: string, description: string): never {
  throw new ValidationError(`${field}: ${description}`, [{ field, description }]);
}

function checkName(name: string): void {
  if (!LOGIN.test(name)) invalid('name', LOGIN_RULE);
}

function checkDescription(description: string): void {
  if (description.length > MAX_DESCRIPTION) invalid('description', `at most ${MAX_DESCRIPTION} characters`);
}

/** `<namespace>/<name>` texts as subjects, each once, sorted; 422 for one that is not. */
function parseSubjects(texts: string[]): KubernetesSubject[] {
  if (texts.length > MAX_KUBERNETES_SUBJECTS) invalid('kubernetes_subjects', `at most ${MAX_KUBERNETES_SUBJECTS}`);
  const subjects = new Map<string, KubernetesSubject>();
  for (const text of texts) {
    const m = SUBJECT.exec(text);
    if (!m || m[2].length > 253) invalid('kubernetes_subjects', 'each must be "<namespace>/<name>" of a Kubernetes ServiceAccount');
    subjects.set(text, { namespace: m[1], name: m[2] });
  }
  return [...subjects.values()].sort((a, b) => subjectText(a).localeCompare(subjectText(b)));
}

/** The organization a request names: null for 0 (a site-wide account). */
const orgOf = (orgId: number) => (orgId ? orgId : null);

/** Everything a service account is, as its answer and an undo need it. */
interface Snapshot {
  row: ServiceAccountRow;
  roleIds: number[];
  subjects: KubernetesSubject[];
}

/**
 * Service accounts (docs/service-accounts.md): accounts of other services, of one organization or of the site. Their
 * rows change with their tuples in authz (an organization's are members of it, and may hold its custom roles; a
 * site-wide one may be a site admin), staged through the outbox; a failed tuple write puts the rows back. Every
 * change of an account is recorded where it is written (changes.ts), so the caches holding its credentials drop them,
 * as for users.
 */
export class ServiceAccounts {
  private readonly store: ServiceAccountsStore;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly authz: Pick<OrgAuthz, 'roleIdsOf'>,
  ) {
    this.store = ServiceAccountsStore.create(db);
  }

  /** Roles given to an account of `orgId`: each once, ascending; 400 for a site-wide account or a role not of `orgId`. */
  private async checkRoles(orgId: number | null, roleIds: number[], ctx: CallContext): Promise<number[]> {
    const ids = [...new Set(roleIds)].sort((a, b) => a - b);
    if (!ids.length) return ids;
    if (orgId === null)
      throw new InputError('a site-wide service account holds no custom roles', [{ field: 'roles', description: 'none' }]);
    if (ids.length > MAX_SERVICE_ACCOUNT_ROLES) invalid('roles', `at most ${MAX_SERVICE_ACCOUNT_ROLES}`);
    const ofOrg = await this.authz.roleIdsOf(orgId, ctx);
    const foreign = ids.filter((id) => !ofOrg.has(id));
    if (foreign.length)
      throw new InputError(`roles ${foreign.join(', ')} are not custom roles of this organization`, [
        { field: 'roles', description: 'custom roles of the organization only' },
      ]);
    return ids;
  }

  private checkSiteAdmin(orgId: number | null, siteAdmin: boolean | undefined): void {
    if (siteAdmin && orgId !== null)
      throw new InputError("only a site-wide service account may be a site admin; an organization's holds its roles", [
        { field: 'site_admin', description: 'site-wide service accounts only' },
      ]);
  }

  /** 409 when the name or a subject is taken by another account. */
  private async assertFree(login: string | undefined, subjects: KubernetesSubject[], trx: Knex.Transaction, self?: number): Promise<void> {
    if (login !== undefined && (await this.store.loginTaken(login, trx, self)))
      throw new ConflictError(`the name ${login} is already taken by a user, an organization or a service account`);
    const taken = await this.store.subjectsTaken(subjects, trx, self);
    if (taken.length) throw new ConflictError(`${taken.map(subjectText).join(', ')} already stand for another service account`);
  }

  /** Runs a change whose concurrent twin may win a unique constraint: that is a conflict, as the checks before it say. */
  private async unique<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError('the name or a Kubernetes subject was taken meanwhile');
      throw err;
    }
  }

  async create(req: serviceAccountsV1.CreateServiceAccountRequest, ctx: CallContext): Promise<serviceAccountsV1.ServiceAccount> {
    const orgId = orgOf(req.orgId);
    checkName(req.name);
    checkDescription(req.description);
    const subjects = parseSubjects(req.kubernetesSubjects);
    this.checkSiteAdmin(orgId, req.siteAdmin);
    const roleIds = await this.checkRoles(orgId, req.roleIds, ctx);
    const id = await this.unique(() =>
      this.outbox.run(
        async (trx, stage) => {
          // The organization stays while its account is made (its deletion takes its service accounts along).
          const org = orgId === null ? undefined : this.db.table('accounts', trx).where({ id: orgId, type: ACCOUNT_TYPE.organization });
          if (org && !(await org.forShare().first('id'))) throw new NotFoundError(`organization ${orgId} does not exist`);
          await this.assertFree(req.name, subjects, trx);
          const id = await this.store.insert(
            {
              orgId,
              login: req.name,
              description: req.description,
              isAdmin: req.siteAdmin,
              active: req.active ?? true,
              createdBy: req.creatorId,
            },
            trx,
          );
          await this.store.setRoles(id, roleIds, trx);
          await this.store.setSubjects(id, subjects, trx);
          stageServiceAccountTuples(stage, tuplesOf({ id, orgId, isAdmin: req.siteAdmin, roleIds }));
          return id;
        },
        { call: ctx, undo: (trx, id) => this.store.delete([id], trx) },
      ),
    );
    return this.get(req.orgId, id, ctx);
  }

  async list(orgIdOrZero: number, ctx: CallContext): Promise<serviceAccountsV1.ServiceAccount[]> {
    const rows = await this.store.list(orgOf(orgIdOrZero));
    return this.answers(rows, await this.store.details(rows), ctx);
  }

  async get(orgIdOrZero: number, id: number, ctx: CallContext): Promise<serviceAccountsV1.ServiceAccount> {
    const row = await this.require(orgIdOrZero, id);
    return (await this.answers([row], await this.store.details([row]), ctx))[0];
  }

  /** The account `id` of the organization (0: a site-wide one); 404 for any other. */
  private async require(orgIdOrZero: number, id: number, trx?: Knex.Transaction, lock = false): Promise<ServiceAccountRow> {
    const row = await this.store.find(id, orgOf(orgIdOrZero), trx, lock);
    if (!row) throw new NotFoundError(`service account ${id} does not exist`);
    return row;
  }

  private async snapshot(orgIdOrZero: number, id: number, trx: Knex.Transaction): Promise<Snapshot> {
    const row = await this.require(orgIdOrZero, id, trx, true);
    const details = await this.store.details([row], trx);
    return { row, roleIds: details.roleIds.get(id) ?? [], subjects: details.subjects.get(id) ?? [] };
  }

  /** Puts an account back as it was (the undo of an edit whose tuples could not be written). */
  private async restore(before: Snapshot, trx: Knex.Transaction): Promise<void> {
    const { id, login, description, is_admin, active } = before.row;
    await this.store.update(id, { login, description, is_admin, active }, trx);
    await this.store.setRoles(id, before.roleIds, trx);
    await this.store.setSubjects(id, before.subjects, trx);
  }

  async edit(req: serviceAccountsV1.EditServiceAccountRequest, ctx: CallContext): Promise<serviceAccountsV1.ServiceAccount> {
    const orgId = orgOf(req.orgId);
    if (req.name !== undefined) checkName(req.name);
    if (req.description !== undefined) checkDescription(req.description);
    const subjects = req.kubernetesSubjects && parseSubjects(req.kubernetesSubjects.subjects);
    this.checkSiteAdmin(orgId, req.siteAdmin);
    const roleIds = req.roleIds && (await this.checkRoles(orgId, req.roleIds.ids, ctx));
    await this.unique(() =>
      this.outbox.run(
        async (trx, stage) => {
          const before = await this.snapshot(req.orgId, req.id, trx);
          await this.assertFree(req.name, subjects ?? [], trx, req.id);
          await this.store.update(
            req.id,
            {
              ...(req.name !== undefined && { login: req.name }),
              ...(req.description !== undefined && { description: req.description }),
              ...(req.siteAdmin !== undefined && { is_admin: req.siteAdmin }),
              ...(req.active !== undefined && { active: req.active }),
            },
            trx,
          );
          if (roleIds) await this.store.setRoles(req.id, roleIds, trx);
          if (subjects) await this.store.setSubjects(req.id, subjects, trx);
          const after = { id: req.id, orgId, isAdmin: req.siteAdmin ?? before.row.is_admin, roleIds: roleIds ?? before.roleIds };
          const was = { ...after, isAdmin: before.row.is_admin, roleIds: before.roleIds };
          // Only the tuples the edit changes: one that changes none (a description, deactivating) has no effect to fail and be undone.
          stageServiceAccountTuples(stage, changedTuples(tuplesOf(was), tuplesOf(after)));
          return before;
        },
        { call: ctx, undo: (trx, before) => this.restore(before, trx) },
      ),
    );
    return this.get(req.orgId, req.id, ctx);
  }

  async delete(orgIdOrZero: number, id: number, ctx: CallContext): Promise<void> {
    await this.outbox.run(
      async (trx, stage) => {
        const before = await this.snapshot(orgIdOrZero, id, trx);
        await this.store.delete([id], trx);
        stageServiceAccountTuples(
          stage,
          tuplesOf({ id, orgId: before.row.service_account_org_id, isAdmin: before.row.is_admin, roleIds: before.roleIds }),
        );
      },
      { call: ctx },
    );
  }

  /**
   * Inside the transaction that deletes an organization: its service accounts go with it (their tokens, roles and
   * subjects too) and their tuples are taken back.
   */
  async onOrgDelete(trx: Knex.Transaction, orgId: number, stage: StageEffect): Promise<void> {
    const rows = await this.store.list(orgId, trx);
    if (!rows.length) return;
    const details = await this.store.details(rows, trx);
    await this.store.delete(
      rows.map((r) => r.id),
      trx,
    );
    stageServiceAccountTuples(
      stage,
      rows.flatMap((r) => tuplesOf({ id: r.id, orgId, isAdmin: r.is_admin, roleIds: details.roleIds.get(r.id) ?? [] })),
    );
  }

  async createToken(req: serviceAccountsV1.CreateServiceAccountTokenRequest): Promise<serviceAccountsV1.CreatedServiceAccountToken> {
    return this.db.transaction(async (trx) => {
      // Locked, so the account cannot be deleted between the check and the insert.
      await this.require(req.orgId, req.serviceAccountId, trx, true);
      const { created, createdAt } = await insertToken(this.db, req.serviceAccountId, req.name, { trx });
      return { ...created, createdUnix: unixSeconds(createdAt) };
    });
  }

  async listTokens(orgIdOrZero: number, id: number): Promise<orgsTeamsV1.TokenInfo[]> {
    await this.require(orgIdOrZero, id);
    const rows = await this.db.table('access_tokens').where({ uid: id }).orderBy('id');
    type Row = { id: number; name: string; token_last_eight: string; created_at: Date; last_used_at: Date | null; access_scopes: string };
    return rows.map((r: Row) => ({
      id: Number(r.id),
      name: r.name,
      tokenLastEight: r.token_last_eight,
      createdUnix: unixSeconds(r.created_at),
      lastUsedUnix: unixSeconds(r.last_used_at),
      scope: '',
      scopeAccountId: 0,
      // What a service account may do is its roles: its tokens are made with every scope.
      accessScopes: r.access_scopes.split(','),
    }));
  }

  async deleteToken(req: serviceAccountsV1.ServiceAccountTokenRequest): Promise<void> {
    await this.require(req.orgId, req.serviceAccountId);
    changed.accounts([req.serviceAccountId]);
    const n = await this.db.table('access_tokens').where({ uid: req.serviceAccountId, id: req.id }).delete();
    if (n === 0) throw new NotFoundError(`token ${req.id} does not exist`);
  }

  /** The answers of these rows; roles deleted in authz since they were given are left out. */
  private async answers(
    rows: ServiceAccountRow[],
    details: ServiceAccountDetails,
    ctx: CallContext,
  ): Promise<serviceAccountsV1.ServiceAccount[]> {
    const orgIds = [...new Set(rows.filter((r) => details.roleIds.has(r.id)).map((r) => r.service_account_org_id!))];
    const existing = new Map(await Promise.all(orgIds.map(async (orgId) => [orgId, await this.authz.roleIdsOf(orgId, ctx)] as const)));
    return rows.map((r) => ({
      id: r.id,
      name: r.login,
      description: r.description,
      orgId: r.service_account_org_id ?? 0,
      roleIds: (details.roleIds.get(r.id) ?? []).filter((id) => existing.get(r.service_account_org_id!)?.has(id)),
      siteAdmin: r.is_admin,
      kubernetesSubjects: (details.subjects.get(r.id) ?? []).map(subjectText),
      active: r.active,
      createdUnix: unixSeconds(r.created_at),
      createdById: r.created_by ?? 0,
      createdByLogin: r.created_by === null ? '' : (details.creators.get(r.created_by) ?? ''),
    }));
  }
}
