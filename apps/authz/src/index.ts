export { authzApp } from './app';
