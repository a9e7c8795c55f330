import { metricsproxyV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { startMetricsproxy } from '../src/app';

describeServiceContract({
  app: 'metricsproxy',
  schema: 'metricsproxy',
  grpcService: 'platform.metricsproxy.v1.MetricsproxyService',
  definition: metricsproxyV1.MetricsproxyServiceService,
  start: startMetricsproxy,
});
