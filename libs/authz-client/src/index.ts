export { AUTHZ_KEPT, authzClients, authzReads, keptAuthz, type AuthzClients, type AuthzKeeping, AUTHZ_SERVICES } from './clients';
