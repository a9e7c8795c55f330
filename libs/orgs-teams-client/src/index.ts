export { keptOrgsTeams, orgsTeamsClients, type OrgsTeamsClients, type OrgsTeamsKeeping, type OrgsTeamsReadModel } from './clients';
