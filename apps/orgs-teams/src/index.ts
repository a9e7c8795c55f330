export { orgsTeamsApp } from './app';
// For the admin CLI (deploy/cli): accounts, passwords and tokens through orgs-teams' own code and schema.
export { Identity, type AccountRow } from './identity/identity';
export { verifyPassword } from './identity/passwords';
export { BOOTSTRAP_PASSWORD_FILE, SITE_OBJECT, createUser, type TupleWriter } from './identity/site-admin';
export { migrations as orgsTeamsMigrations } from '../migrations';
