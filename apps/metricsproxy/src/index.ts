export { startMetricsproxy } from './app';
