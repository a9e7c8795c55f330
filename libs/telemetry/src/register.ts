/**
 * Side-effect entry: starts tracing for this process when OTEL_EXPORTER_OTLP_ENDPOINT is set (see
 * tracing.ts). It is the FIRST import of every app's main.ts and of the one-process launcher, so the
 * instrumented modules load after it. The service name is OTEL_SERVICE_NAME, else the app the entry script
 * belongs to, else `platform` (the launcher, where all apps share one SDK).
 */
import { appOfEntry, startTracing } from './tracing';

startTracing(appOfEntry(process.argv[1]) ?? 'platform');
