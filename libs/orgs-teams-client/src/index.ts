export {
  ORGS_TEAMS_KEPT,
  keptOrgsTeams,
  keptSyncTokens,
  ORGS_TEAMS_READS,
  orgsTeamsClients,
  type OrgsTeamsClients,
  type OrgsTeamsKeeping,
  type OrgsTeamsReadModel,
  ORGS_TEAMS_SERVICES,
} from './clients';
