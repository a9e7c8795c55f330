export { startOrgsTeams } from './app';
