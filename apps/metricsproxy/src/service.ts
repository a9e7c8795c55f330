import { metricsproxyV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';
import { InputError } from '@platform/errors';
import type { Registrations } from './registrations';

const contextOf = (c: metricsproxyV1.BackendContext | undefined): metricsproxyV1.BackendContext => {
  if (!c || c.ownerId <= 0 || !c.clusterUid) throw new InputError('a backend context needs the owner and the cluster');
  return c;
};
const backendOf = (b: metricsproxyV1.BackendConfig | undefined): metricsproxyV1.BackendConfig => {
  if (!b || (!b.url && !b.service)) throw new InputError('backend needs a url or a service');
  return b;
};

/** The methods that change nothing; every other one is a write, announced (registrations-changed.ts). */
export const METRICSPROXY_READS: readonly (keyof typeof metricsproxyV1.MetricsproxyServiceService)[] = ['getVersion', 'lookupBackend'];

/** The MetricsproxyService binding: one line per RPC of proto/platformadmin/metricsproxy/v1/, handing it to its feature. */
export function metricsproxyService(registrations: Registrations): ServiceBinding<typeof metricsproxyV1.MetricsproxyServiceService> {
  return bindService(metricsproxyV1.MetricsproxyServiceService, {
    getVersion: async () => versionOf('metricsproxy'),
    registerFlavorA: (req) => registrations.registerA(contextOf(req.context), backendOf(req.backend)),
    unregisterFlavorA: async (req) => (await registrations.unregisterA(contextOf(req)), {}),
    registerFlavorB: (req) => registrations.registerB(contextOf(req.context), backendOf(req.backend)),
    unregisterFlavorB: async (req) => (await registrations.unregisterB(contextOf(req)), {}),
    lookupBackend: (req) => registrations.lookup(req.ownerId, req.clusterUid, req.projectId),
  });
}
