export { authzClients, keptAuthz, type AuthzClients, type AuthzKeeping } from './clients';
