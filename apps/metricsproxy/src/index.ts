export { metricsproxyApp } from './app';
