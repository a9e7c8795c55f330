export { clustersApp } from './app';
