export * from './config';
export { publicUrlVar, publicUrlOf, publicLink } from './public-url';
export { createLogger, type Logger } from './logger';
export { PLATFORM_VERSION } from './version';
export { startGrpcServer, type RunningGrpcServer } from './grpc-server';
export { bindService, fullServiceName, REQUEST_ID_KEY, withNames, type FieldLimits, type Handlers, type ServiceBinding } from './service-binding';
export { createCallContext, type CallContext, type Caller } from './call-context';
export { createClient, createClients, type PromiseClient, type CallOptions, type ClientOptions } from './grpc-client';
export {
  TEXT_LIMITS,
  MAX_STRING_FIELD,
  DEFAULT_GRPC_MAX_MESSAGE_BYTES,
  grpcMessageLimitVar,
  checkLengths,
  checkRequestLimits,
  serviceLimits,
  withLimits,
  type ServiceLimits,
  type LengthCheck,
} from './limits';
export { startService, stopOnSignal, versionOf, type ServiceSpec, type RunningService, type ServiceContext } from './service';
export { runMain, defineApp, embeddedDatabases, startApp, type AppDatabase, type AppDefinition } from './main';
export { DependencyError, EXIT_DEPENDENCY_UNAVAILABLE } from './dependency-error';
export { keyFromFile } from './key-file';
export { chunks } from './chunks';
export { backendState } from './backend-state';
export { announcingWrites, type WriteCall } from './announcing-writes';
export { SecretBox } from './secret-box';
export { addressRange, isGlobalUnicast, nonGlobalReason, GLOBAL_UNICAST } from './global-address';
export { FailureLimiter, loginFailureWindowVar, maxFailuresVar, type FailureLimiterOptions } from './failure-limiter';
export {
  refuseUnfinishedRestore,
  readRestoreMarkerFile,
  readRestoreMarkerRow,
  unfinishedRestoreLine,
  UnfinishedRestoreError,
  RESTORE_MARKER_FILE,
  RESTORE_MARKER_SCHEMA,
  RESTORE_MARKER_TABLE,
  type RestoreMarker,
} from './unfinished-restore';
export {
  installationOf,
  keepServingOnBusFailures,
  newInstallation,
  readInstallation,
  replaceInstallation,
  INSTALLATION_SCHEMA,
  INSTALLATION_TABLE,
  type Installation,
} from './bus-readiness';
export { lockDataDir, DataDirInUseError, LOCK_DIR, type DataDirLock, type LockHolder } from './data-dir-lock';
export {
  readiness,
  answerLive,
  answerReady,
  databaseCheck,
  busCheck,
  ownDependencyChecks,
  grpcServingCheck,
  HEALTH_PATHS,
  PROBE_TIMEOUT_MS,
  type DependencyCheck,
  type GrpcServingCheck,
  type Readiness,
} from './health';
export { HttpMetrics, expressRoute } from './http-metrics';
export { PortInUseError, EXIT_CONFIG, portError, databaseStartError, describeStartError } from './start-errors';
export { appCredential, useAppKeys, AppCredential, APP_TOKEN_ISSUER, jwtPart } from './app-credential';
export { admit, callerOf, CredentialCache, grpcCallerAccess, type CallerAccess } from './caller';
export {
  ACCESS_SCOPE_CATEGORIES,
  TOKEN_ACCESS_SCOPES,
  DEFAULT_ACCESS_SCOPES,
  parseAccessScopes,
  scopesCover,
  type AccessScope,
  type AccessScopeCategory,
  type TokenAccessScope,
} from './access-scopes';
