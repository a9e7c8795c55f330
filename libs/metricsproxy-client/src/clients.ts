import { allOf, following, METRICSPROXY_CHANGED, NoticeCache, type MetricsproxyChanged, type ReadModel } from '@platform/bus';
import { metricsproxyV1 } from '@platform/proto';
import { createClients, type CallOptions, type ClientOptions, type PromiseClient, type WriteCall } from '@platform/service-kit';

/** metricsproxy's gRPC services, by the name its clients go by: what its clients and its test stand-ins are made from. */
export const METRICSPROXY_SERVICES = {
  metricsproxy: metricsproxyV1.MetricsproxyServiceService,
} as const;

/** metricsproxy's services as another app calls them. */
export interface MetricsproxyClients {
  /** Metrics backends registered as dashboard datasources, and what the auth hook needs of one (docs/metrics-proxy.md). */
  metricsproxy: PromiseClient<typeof metricsproxyV1.MetricsproxyServiceService>;
}

/** What a reader keeps of metricsproxy's answers, and how long at most (0 keeps nothing). */
export interface MetricsproxyKeeping {
  ttlMs: number;
  /** Names the cache in the metrics (`<reader>.metrics-backends`). */
  reader: string;
}

/** The calls metricsproxy's read model answers. */
type MetricsproxyReads = Pick<MetricsproxyClients['metricsproxy'], 'lookupBackend'>;

/** metricsproxy's clients, answering from what the reader keeps when `keep` is given (see keptBackends). */
export function metricsproxyClients(
  address: string,
  opts: ClientOptions,
  keep?: MetricsproxyKeeping,
): { clients: MetricsproxyClients; readModel: ReadModel } {
  const clients: MetricsproxyClients = createClients(METRICSPROXY_SERVICES, address, opts);
  if (!keep) return { clients, readModel: allOf([]) };
  const kept = keptBackends(clients.metricsproxy, keep);
  return { clients: { metricsproxy: kept.client }, readModel: kept.readModel };
}

const registrationTag = (ownerId: number, clusterUid: string) => `registration:${Number(ownerId)}|${String(clusterUid).toLowerCase()}`;

/**
 * metricsproxy's read model, as it defines it for the apps that read it: what is registered for a cluster of an owner
 * (LookupBackend: found, and its client organization), by owner, cluster and project. Its rule, written here by
 * metricsproxy: it announces every write it answers (`metricsproxy.changed`, named by metricsproxyChangedBy), which
 * drops every project's answer of the owner's cluster named, or everything when a write named none (`all`). A lookup
 * that found none is kept as well: the registration that follows is a write, announced naming the cluster, which drops
 * it (a hook asked about clusters without a backend, the usual case, answers from memory too). Each answer is served only after the
 * reader's bus has caught up with the notices sent before the request arrived (`CallOptions.arrivedAt`); nothing is
 * kept while the bus is away.
 */
export function keptBackends<C extends MetricsproxyReads>(client: C, keep: MetricsproxyKeeping): { client: C; readModel: ReadModel } {
  const backends = new NoticeCache<metricsproxyV1.LookupBackendResponse>({
    name: `${keep.reader}.metrics-backends`,
    ttlMs: keep.ttlMs,
    maxEntries: 10_000,
  });
  const stale = (n: unknown) => {
    const { registrations, all } = (n ?? {}) as Partial<MetricsproxyChanged>;
    // A notice that names nothing this reader can read drops everything too.
    return all || !Array.isArray(registrations) ? ('all' as const) : registrations.map((r) => registrationTag(r.ownerId, r.clusterUid));
  };
  const kept: C = {
    ...client,
    lookupBackend: (req: metricsproxyV1.LookupBackendRequest, opts?: CallOptions) =>
      backends.through(
        `${req.ownerId}|${req.clusterUid.toLowerCase()}|${req.projectId}`,
        () => client.lookupBackend(req, opts),
        { tags: [registrationTag(req.ownerId, req.clusterUid)] },
        opts?.arrivedAt,
      ),
  };
  return { client: kept, readModel: allOf([following(backends, [{ subject: METRICSPROXY_CHANGED, stale }])]) };
}

/**
 * What metricsproxy's notice after a write names (`metricsproxy.changed`): the registration of the context the write
 * was asked for (RegisterFlavorA/B's `context`, UnregisterFlavorA/B's request itself), or all of them when the request
 * names no owner and cluster (a write added later that names neither is still announced).
 */
export function metricsproxyChangedBy(call: Pick<WriteCall, 'request'>): MetricsproxyChanged {
  type Named = Partial<Pick<metricsproxyV1.BackendContext, 'ownerId' | 'clusterUid'>>;
  const request = call.request as (Named & { context?: Named }) | undefined;
  const context = request?.context ?? request;
  const ownerId = Number(context?.ownerId);
  const clusterUid = context?.clusterUid;
  if (!Number.isSafeInteger(ownerId) || ownerId <= 0 || typeof clusterUid !== 'string' || clusterUid === '')
    return { registrations: [], all: true };
  return { registrations: [{ ownerId, clusterUid: clusterUid.toLowerCase() }] };
}

/** Every read of metricsproxy a reader keeps (the gateway's `kept.metricsproxy`, KeptDoor): its read model (keptBackends). */
export const METRICSPROXY_KEPT = {
  metricsproxy: {
    /** What is registered for a cluster of an owner, found or not, kept until a notice names the cluster. */
    lookupBackend: 'registration',
  },
} as const;
