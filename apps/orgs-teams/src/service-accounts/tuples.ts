import type { Database, EffectHandler, StageEffect } from '@platform/db';
import { ACCOUNT_TYPE } from '../identity/identity';
import { SITE_OBJECT } from '../identity/site-admin';
import { reconcileTuples } from '../orgs/effects';
import type { OrgAuthz } from '../orgs/org-authz';
import { tupleKey, type Tuple } from '../relationships';

// The relationships orgs-teams keeps in authz for service accounts (docs/service-accounts.md).

/** An organization's service account is a direct member of it: it sees what the members see. */
export const memberOfOrg = (accountId: number, orgId: number): Tuple => ({
  user: `user:${accountId}`,
  relation: 'member',
  object: `organization:${orgId}`,
});

/** A service account holds a custom role of its organization. */
export const holdsRole = (accountId: number, roleId: number): Tuple => ({
  user: `user:${accountId}`,
  relation: 'assignee',
  object: `role:${roleId}`,
});

/** A site-wide service account is a site admin. */
export const siteAdmin = (accountId: number): Tuple => ({ user: `user:${accountId}`, relation: 'admin', object: SITE_OBJECT });

/** What a service account's rows say about it, as its tuples need it. */
export interface AccountTuplesOf {
  id: number;
  orgId: number | null;
  isAdmin: boolean;
  roleIds: number[];
}

/** The tuples these rows call for. */
export function tuplesOf(a: AccountTuplesOf): Tuple[] {
  return [
    ...(a.orgId ? [memberOfOrg(a.id, a.orgId)] : []),
    ...(a.isAdmin ? [siteAdmin(a.id)] : []),
    ...a.roleIds.map((r) => holdsRole(a.id, r)),
  ];
}

/** The tuples in one list and not the other (either way): what an edit from `was` to `now` changes. */
export function changedTuples(was: Tuple[], now: Tuple[]): Tuple[] {
  const before = new Set(was.map(tupleKey));
  const after = new Set(now.map(tupleKey));
  return [...was.filter((t) => !after.has(tupleKey(t))), ...now.filter((t) => !before.has(tupleKey(t)))];
}

const accountOf = (t: Tuple) => Number(/^user:(\d+)$/.exec(t.user)?.[1] ?? 0);

/**
 * Which of these service-account tuples the rows call for now: the account exists (in that organization; a site
 * admin; holding that role). The effect writes exactly these and deletes the rest, so applying it late or twice
 * still leaves the tuples matching the rows.
 */
export async function serviceAccountTuplesCalledFor(db: Database, tuples: Tuple[]): Promise<Set<string>> {
  const ids = [...new Set(tuples.map(accountOf))];
  const [accounts, roles] = await Promise.all([
    db.table('accounts').whereIn('id', ids).where({ type: ACCOUNT_TYPE.serviceAccount }).select('id', 'service_account_org_id', 'is_admin'),
    db.table('service_account_roles').whereIn('account_id', ids).select('account_id', 'role_id'),
  ]);
  const rolesOf = new Map<number, number[]>();
  for (const r of roles as { account_id: number; role_id: number }[]) {
    const id = Number(r.account_id);
    rolesOf.set(id, [...(rolesOf.get(id) ?? []), Number(r.role_id)]);
  }
  const called = new Set<string>();
  for (const a of accounts as { id: number; service_account_org_id: number | null; is_admin: boolean }[]) {
    const id = Number(a.id);
    const orgId = a.service_account_org_id === null ? null : Number(a.service_account_org_id);
    for (const t of tuplesOf({ id, orgId, isAdmin: a.is_admin, roleIds: rolesOf.get(id) ?? [] })) called.add(tupleKey(t));
  }
  return called;
}

/** The outbox effect bringing service-account tuples in line with the rows. */
export const SERVICE_ACCOUNT_TUPLES = 'authz.service-account-tuples';

/** Stages bringing these tuples in line with the rows once the change committed (nothing when none). */
export function stageServiceAccountTuples(stage: StageEffect, tuples: Tuple[]): void {
  if (tuples.length) stage(SERVICE_ACCOUNT_TUPLES, { tuples });
}

/** The handler of that effect. */
export function serviceAccountEffects(db: Database, authz: Pick<OrgAuthz, 'write'>): Record<string, EffectHandler<{ tuples: Tuple[] }>> {
  return {
    [SERVICE_ACCOUNT_TUPLES]: {
      apply: (c, call) => reconcileTuples(db, authz, c.tuples, call, serviceAccountTuplesCalledFor),
      // Applied again after an undo put the rows back, it brings the tuples back in line with them.
      invert: (c) => c,
    },
  };
}
