import { metricsproxyV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';

/** The MetricsproxyService binding: one line per RPC of proto/platform/metricsproxy/v1/, handing it to its feature. */
export function metricsproxyService(): ServiceBinding<typeof metricsproxyV1.MetricsproxyServiceService> {
  return bindService(metricsproxyV1.MetricsproxyServiceService, {
    getVersion: async () => versionOf('metricsproxy'),
  });
}
