export {
  keptBackends,
  metricsproxyChangedBy,
  metricsproxyClients,
  type MetricsproxyClients,
  type MetricsproxyKeeping,
} from './clients';
