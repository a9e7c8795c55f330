export {
  METRICSPROXY_KEPT,
  keptBackends,
  metricsproxyChangedBy,
  metricsproxyClients,
  type MetricsproxyClients,
  type MetricsproxyKeeping,
  METRICSPROXY_SERVICES,
} from './clients';
