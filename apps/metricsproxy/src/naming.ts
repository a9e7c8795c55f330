import { createHash } from 'node:crypto';
import type { metricsproxyV1 } from '@platform/proto';

/**
 * The datasource name of a cluster: `<owner account id>.<cluster UID>[.<project id>]`, the `uidcid` the auth
 * hook receives from the reverse proxy in front of the metrics backend.
 */
export const datasourceName = (c: metricsproxyV1.BackendContext) =>
  [String(c.ownerId), c.clusterUid, ...(c.projectId ? [c.projectId] : [])].join('.');

/** A stable datasource uid within flavor A's 40-character limit, derived from the name. */
export const datasourceUid = (name: string) => `mp-${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;

/** The flavor A folder, and the flavor B project, of an organization: by id, so a renamed organization keeps it. */
export const orgContainer = (ownerId: number) => `org-${ownerId}`;

/** The URL the dashboard's proxy reaches the backend at: `url`, or the in-cluster Service's address. */
export function backendUrl(b: metricsproxyV1.BackendConfig): string {
  if (b.url) return b.url;
  const s = b.service!;
  const path = s.path ? (s.path.startsWith('/') ? s.path : `/${s.path}`) : '';
  const query = s.query ? `?${s.query.replace(/^\?/, '')}` : '';
  return `${s.scheme || 'http'}://${s.name}.${s.namespace}.svc:${s.port}${path}${query}`;
}
