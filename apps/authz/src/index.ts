export { startAuthz } from './app';
