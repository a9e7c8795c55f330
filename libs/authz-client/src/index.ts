export { authzClients, keptAuthz, type AuthzClients, type AuthzKeeping } from './clients';
export { withKeptDecisions } from './clients';
