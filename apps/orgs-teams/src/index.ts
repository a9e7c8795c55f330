export { orgsTeamsApp } from './app';
