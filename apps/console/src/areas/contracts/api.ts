import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../../api/client';

/**
 * A contract is reached through one of two sides of the API (docs/contracts.md): the account's routes
 * (`/user/contracts...`, for the members of the `org` organization, which answer the sanitized `UserContract`)
 * and the site admins' (`/contracts...`). The contract screens are the same on both sides; only the routes
 * differ, so each side is this one interface and the screens take it.
 */

export type Contract = Schema<'Contract'> | Schema<'UserContract'>;
export type Binding = Schema<'ContractClusterStatus'>;
export type AuditEvent = Schema<'ContractAuditEvent'>;
export type QuotaUsage = Schema<'ContractQuotaUsage'>;
export type ImportableCluster = Schema<'ImportableCluster'>;
export type License = Schema<'License'>;
export type ClusterReference = Schema<'ClusterReference'>;

/**
 * The area's query keys: an organization's contracts under the organization (`['orgs', org, 'contracts']`), the
 * site admins' side under `['contracts', 'admin']`; one contract's answers under its side's key and its id.
 */
export const contractKeys = {
  ofOrg: (org: string) => ['orgs', org, 'contracts'] as const,
  admin: ['contracts', 'admin'] as const,
  list: (routes: Pick<ContractRoutes, 'key'>, owner = '') => [...routes.key, 'list', owner] as const,
  contract: (routes: Pick<ContractRoutes, 'key'>, id: number) => [...routes.key, id] as const,
  audit: (routes: Pick<ContractRoutes, 'key'>, id: number) => [...routes.key, id, 'audit'] as const,
  quotaUsage: (routes: Pick<ContractRoutes, 'key'>, id: number) => [...routes.key, id, 'quota-usage'] as const,
  unbound: (routes: Pick<ContractRoutes, 'key'>, id: number) => [...routes.key, id, 'unbound'] as const,
  document: (routes: Pick<ContractRoutes, 'key'>, id: number, path: string) => [...routes.key, id, 'document', path] as const,
  /** The clusters an organization's members may name when binding: enrolled ones and those bound already. */
  knownClusters: (org: string) => [...contractKeys.ofOrg(org), 'known-clusters'] as const,
  products: ['contracts', 'products'] as const,
  owners: ['contracts', 'owners'] as const,
};

export interface ContractRoutes {
  /** Where the contract screens of this side live, e.g. `/orgs/demo/contracts`. */
  base: string;
  /** The query keys of this side's contracts start so: a change on a contract invalidates them all (lists count clusters). */
  key: readonly unknown[];
  get(id: number): Promise<Contract>;
  /** The owner's inventory clusters not bound to the contract: what may be bound. */
  unbound(id: number): Promise<ImportableCluster[]>;
  bind(id: number, clusters: ClusterReference[]): Promise<Binding[]>;
  unbind(id: number, ccID: number): Promise<unknown>;
  issueLicense(id: number, ccID: number): Promise<License>;
  audit(id: number): Promise<AuditEvent[]>;
  /** What the contract used of its quota, measured by the platform when asked (as license issuing measures it). */
  quotaUsage(id: number): Promise<QuotaUsage>;
  /** A URL that downloads the contract document without a token, valid 30 minutes. */
  documentUrl(id: number): Promise<string>;
}

/** The account's side: every call carries the `org` context (members of the organization only). */
export function accountRoutes(org: string): ContractRoutes {
  const query = { org };
  return {
    base: `/orgs/${encodeURIComponent(org)}/contracts`,
    key: contractKeys.ofOrg(org),
    get: (id) => ok(api.GET('/user/contracts/{id}', { params: { path: { id }, query } })),
    unbound: (id) => ok(api.GET('/user/contracts/{id}/clusters/imported/non-associated', { params: { path: { id }, query } })),
    bind: (id, body) => ok(api.POST('/user/contracts/{id}/clusters', { params: { path: { id }, query }, body })),
    unbind: (id, ccID) => ok(api.DELETE('/user/contracts/{id}/clusters/{ccID}', { params: { path: { id, ccID }, query } })),
    issueLicense: (id, ccID) =>
      ok(api.POST('/user/contracts/{id}/clusters/{ccID}/issue-license', { params: { path: { id, ccID }, query } })),
    audit: (id) => ok(api.GET('/user/contracts/{id}/audit', { params: { path: { id }, query } })),
    quotaUsage: (id) => ok(api.GET('/user/contracts/{id}/quota-usage', { params: { path: { id }, query } })),
    documentUrl: (id) => ok(api.GET('/user/contracts/{id}/document', { params: { path: { id }, query } })),
  };
}

/**
 * The site admins' side. Without `org` the `/{id}` routes reach any owner's contract, which is what the admin's
 * contract page wants: it is opened from a list of every owner's contracts.
 */
export const adminRoutes: ContractRoutes = {
  base: '/admin/contracts',
  key: contractKeys.admin,
  get: (id) => ok(api.GET('/contracts/{id}', { params: { path: { id } } })),
  unbound: (id) => ok(api.GET('/contracts/{id}/clusters/imported/non-associated', { params: { path: { id } } })),
  bind: (id, body) => ok(api.POST('/contracts/{id}/clusters', { params: { path: { id } }, body })),
  unbind: (id, ccID) => ok(api.DELETE('/contracts/{id}/clusters/{ccID}', { params: { path: { id, ccID } } })),
  issueLicense: (id, ccID) => ok(api.POST('/contracts/{id}/clusters/{ccID}/issue-license', { params: { path: { id, ccID } } })),
  audit: (id) => ok(api.GET('/contracts/{id}/audit', { params: { path: { id } } })),
  quotaUsage: (id) => ok(api.GET('/contracts/{id}/quota-usage', { params: { path: { id } } })),
  documentUrl: (id) => ok(api.GET('/contracts/{id}/document', { params: { path: { id } } })),
};

export const useContract = (routes: ContractRoutes, id: number) =>
  useQuery({ queryKey: contractKeys.contract(routes, id), queryFn: () => routes.get(id) });
export const useContractAudit = (routes: ContractRoutes, id: number) =>
  useQuery({ queryKey: contractKeys.audit(routes, id), queryFn: () => routes.audit(id) });
/** The quota's usage, for a contract with a quota; asked again with every change of the contract's side, and on focus. */
export const useQuotaUsage = (routes: ContractRoutes, contract: Contract) =>
  useQuery({
    queryKey: contractKeys.quotaUsage(routes, contract.id),
    queryFn: () => routes.quotaUsage(contract.id),
    enabled: contract.quota.enabled,
  });
export const useUnboundClusters = (routes: ContractRoutes, id: number) =>
  useQuery({ queryKey: contractKeys.unbound(routes, id), queryFn: () => routes.unbound(id) });
/** A signed URL valid 30 minutes: kept 20 before it is asked again. */
export const useDocumentUrl = (routes: ContractRoutes, contract: Contract) =>
  useQuery({
    queryKey: contractKeys.document(routes, contract.id, contract.documentPath),
    queryFn: () => routes.documentUrl(contract.id),
    enabled: Boolean(contract.documentPath),
    staleTime: 20 * 60_000,
  });
export const useOrgContracts = (org: string) =>
  useQuery({
    queryKey: contractKeys.list({ key: contractKeys.ofOrg(org) }),
    queryFn: () => ok(api.GET('/user/contracts', { params: { query: { org } } })),
  });
export const useAdminContracts = (owner: string) =>
  useQuery({ queryKey: contractKeys.list(adminRoutes, owner), queryFn: () => contractsOf(owner) });
export const useProducts = () =>
  useQuery({ queryKey: contractKeys.products, queryFn: () => ok(api.GET('/contracts/available_products')), staleTime: Infinity });

/** The organization's enrolled clusters and those bound to its contracts already, as `[uuid, name]`. */
export const useKnownClusters = (org: string) =>
  useQuery({
    queryKey: contractKeys.knownClusters(org),
    queryFn: async () => {
      const [enrolled, bound] = await Promise.all([
        ok(api.GET('/orgs/{orgname}/clusters', { params: { path: { orgname: org } } })),
        ok(api.GET('/user/contracts/active/associated-clusters', { params: { query: { org } } })),
      ]);
      const names = new Map<string, string>();
      for (const c of enrolled) names.set(c.uid, c.name);
      for (const b of bound) if (!names.has(b.cluster)) names.set(b.cluster, b.displayName || b.cluster);
      return [...names].map(([uid, name]): [string, string] => [uid, name]);
    },
  });

/**
 * A change of a contract (binding, unbinding, a license issued, extending, revoking): once it is done, whether it
 * succeeded or not (a refused license records quota alerts in the audit trail), everything of its side is asked again,
 * the quota's usage too.
 */
export function useContractChange<In, Out>(routes: Pick<ContractRoutes, 'key'>, change: (input: In) => Promise<Out>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: change, onSettled: () => client.invalidateQueries({ queryKey: routes.key }) });
}

/** What a caller may do on a contract's page: bind, unbind and name clusters; issue licenses. */
export interface ContractRights {
  bind: boolean;
  issue: boolean;
}

/**
 * The owner accounts of the admins' contract screens. `GET /contracts` lists one owner's contracts (the `org`
 * account, by default the caller's own), so "every contract" is the contracts of every organization a site admin
 * sees (`GET /orgs`, private ones included) and of the admin's own account. A user's own account is not
 * enumerable: it is reached by naming its login as the owner.
 */

const PAGE = 50; // GET /orgs pages at most 50

export async function everyOrganization(): Promise<Schema<'Organization'>[]> {
  const all: Schema<'Organization'>[] = [];
  for (let page = 1; ; page++) {
    const batch = await ok(api.GET('/orgs', { params: { query: { page, limit: PAGE } } }));
    all.push(...batch);
    if (batch.length < PAGE) return all;
  }
}

/** The organizations as suggestions for an owner field: slug, and full name when there is one. */
export function useOwnerSuggestions(): [string, string][] {
  const orgs = useQuery({ queryKey: contractKeys.owners, queryFn: everyOrganization });
  return (orgs.data ?? []).map((o) => [o.name, o.full_name || o.name]);
}

/** One owner's contracts, or (no owner) every organization's and the admin's own, newest first. */
export async function contractsOf(owner: string): Promise<Contract[]> {
  if (owner) return ok(api.GET('/contracts', { params: { query: { org: owner } } }));
  const orgs = await everyOrganization();
  const lists = await Promise.all([
    ok(api.GET('/contracts')),
    ...orgs.map((o) => ok(api.GET('/contracts', { params: { query: { org: o.name } } }))),
  ]);
  const byId = new Map<number, Contract>();
  for (const c of lists.flat()) byId.set(c.id, c);
  return [...byId.values()].sort((a, b) => b.id - a.id);
}
