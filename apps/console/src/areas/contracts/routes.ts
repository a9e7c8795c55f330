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
export type ImportableCluster = Schema<'ImportableCluster'>;
export type License = Schema<'License'>;
export type ClusterReference = Schema<'ClusterReference'>;

export interface ContractRoutes {
  /** Where the contract screens of this side live, e.g. `/orgs/demo/contracts`. */
  base: string;
  get(id: number): Promise<Contract>;
  /** The owner's inventory clusters not bound to the contract: what may be bound. */
  unbound(id: number): Promise<ImportableCluster[]>;
  bind(id: number, clusters: ClusterReference[]): Promise<Binding[]>;
  unbind(id: number, ccID: number): Promise<unknown>;
  issueLicense(id: number, ccID: number): Promise<License>;
  audit(id: number): Promise<AuditEvent[]>;
  /** A URL that downloads the contract document without a token, valid 30 minutes. */
  documentUrl(id: number): Promise<string>;
}

/** The account's side: every call carries the `org` context (members of the organization only). */
export function accountRoutes(org: string): ContractRoutes {
  const query = { org };
  return {
    base: `/orgs/${encodeURIComponent(org)}/contracts`,
    get: (id) => ok(api.GET('/user/contracts/{id}', { params: { path: { id }, query } })),
    unbound: (id) => ok(api.GET('/user/contracts/{id}/clusters/imported/non-associated', { params: { path: { id }, query } })),
    bind: (id, body) => ok(api.POST('/user/contracts/{id}/clusters', { params: { path: { id }, query }, body })),
    unbind: (id, ccID) => ok(api.DELETE('/user/contracts/{id}/clusters/{ccID}', { params: { path: { id, ccID }, query } })),
    issueLicense: (id, ccID) =>
      ok(api.POST('/user/contracts/{id}/clusters/{ccID}/issue-license', { params: { path: { id, ccID }, query } })),
    audit: (id) => ok(api.GET('/user/contracts/{id}/audit', { params: { path: { id }, query } })),
    documentUrl: (id) => ok(api.GET('/user/contracts/{id}/document', { params: { path: { id }, query } })),
  };
}

/**
 * The site admins' side. Without `org` the `/{id}` routes reach any owner's contract, which is what the admin's
 * contract page wants: it is opened from a list of every owner's contracts.
 */
export const adminRoutes: ContractRoutes = {
  base: '/admin/contracts',
  get: (id) => ok(api.GET('/contracts/{id}', { params: { path: { id } } })),
  unbound: (id) => ok(api.GET('/contracts/{id}/clusters/imported/non-associated', { params: { path: { id } } })),
  bind: (id, body) => ok(api.POST('/contracts/{id}/clusters', { params: { path: { id } }, body })),
  unbind: (id, ccID) => ok(api.DELETE('/contracts/{id}/clusters/{ccID}', { params: { path: { id, ccID } } })),
  issueLicense: (id, ccID) => ok(api.POST('/contracts/{id}/clusters/{ccID}/issue-license', { params: { path: { id, ccID } } })),
  audit: (id) => ok(api.GET('/contracts/{id}/audit', { params: { path: { id } } })),
  documentUrl: (id) => ok(api.GET('/contracts/{id}/document', { params: { path: { id } } })),
};
