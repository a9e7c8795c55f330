export { AUTHZ_KEPT, authzClients, authzReads, keptAuthz, type AuthzClients, type AuthzKeeping, AUTHZ_SERVICES } from './clients';
export { AUTHZ_SCHEMA, insertTuples, literal, tuplesTableHere, type TupleRowSql } from './tuples-table';
