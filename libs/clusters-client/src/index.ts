export { clustersClients, keptClusters, type ClustersClients, type ClustersKeeping } from './clients';
