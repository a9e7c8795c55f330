export { AUTHZ_KEPT, authzClients, keptAuthz, type AuthzClients, type AuthzKeeping, AUTHZ_SERVICES } from './clients';
