// First: tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) must patch http, grpc, pg and knex before they load.
import '@platform/telemetry/register';
import { runMain } from '@platform/service-kit';
import { metricsproxyApp } from './app';

runMain(metricsproxyApp);
