export { startClusters } from './app';
