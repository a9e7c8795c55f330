export { AUTHZ_KEPT, authzClients, keptAuthz, type AuthzClients, type AuthzKeeping } from './clients';
