import { metricsproxyV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { metricsproxyApp } from '../src/app';

describeServiceContract({
  app: metricsproxyApp,
  schema: 'metricsproxy',
  grpcService: 'platformadmin.metricsproxy.v1.MetricsproxyService',
  definition: metricsproxyV1.MetricsproxyServiceService,
});
