// The authorization engine: one interface, and the embedded implementation over the authz schema.
export type { AuthzEngine, CheckRequest, ListOptions, ListUsersRequest, RequestContext, Tuple, TupleCondition, TupleFilter } from './types';
export { EmbeddedEngine, type EmbeddedEngineOptions } from './embedded-engine';
export { TypeSystem, modelFromDsl, modelOfFile, PLATFORM_MODEL_FILE, type AuthorizationModel } from './model';
export { InvalidTupleError, TupleConflictError, ResolutionTooComplexError } from './errors';
export { MAX_RESOLUTION_DEPTH } from './check';
export { TUPLES_TABLE } from './tuple-store';
