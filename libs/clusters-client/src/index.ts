export {
  CLUSTERS_KEPT,
  clustersClients,
  keptClusters,
  keptClustersReads,
  CLUSTERS_READS,
  type ClustersClients,
  type ClustersKeeping,
  CLUSTERS_SERVICES,
} from './clients';
