export {
  Counter,
  Histogram,
  Gauge,
  LATENCY_BUCKETS,
  secondsSince,
  collectProcessMetrics,
  metricsText,
  type CounterChild,
  type HistogramChild,
} from './metrics';
export { cacheMetrics, sizeOf, type CacheMetrics } from './cache-metrics';
export { serveMetrics, answerMetrics, METRICS_PATH, DEFAULT_METRICS_PORT, type MetricsServer } from './metrics-server';
export { startTracing, stopTracing, tracingConfigured, tracingStarted, traceLogFields, appOfEntry } from './tracing';
export { traceHeaders, contextFromHeaders, inPublishSpan, inConsumeSpan } from './trace-context';
