// What `npm start` runs, bundled (deploy/launcher-ready.mjs): tracing first (when OTEL_EXPORTER_OTLP_ENDPOINT is set),
// so it patches http, grpc, pg and knex before they load, then the launcher.
import '@platform/telemetry/register';
import './main';
