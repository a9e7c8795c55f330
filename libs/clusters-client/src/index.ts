export { clustersClients, keptClusters, keptClustersReads, CLUSTERS_READS, type ClustersClients, type ClustersKeeping } from './clients';
