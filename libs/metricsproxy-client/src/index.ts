export {
  METRICSPROXY_KEPT,
  keptBackends,
  metricsproxyChangedBy,
  metricsproxyClients,
  type MetricsproxyClients,
  type MetricsproxyKeeping,
} from './clients';
