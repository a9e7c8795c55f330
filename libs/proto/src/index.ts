// Generated gRPC contracts (ts-proto). The sources are the .proto files under /proto; `nx run proto:generate`
// writes ./gen, and build, test and lint depend on that target.
export * as common from './gen/platform/common/v1/version';
export * as errorDetail from './gen/platform/common/v1/error';
export * as gatewayV1 from './gen/platform/gateway/v1/gateway';
export * as authzV1 from './gen/platform/authz/v1/authz';
export * as orgsTeamsV1 from './gen/platform/orgsteams/v1/orgsteams';
export * as contractsLicensingV1 from './gen/platform/contractslicensing/v1/contractslicensing';
export * as billingDashboardV1 from './gen/platform/billingdashboard/v1/billingdashboard';
export * as metricsproxyV1 from './gen/platform/metricsproxy/v1/metricsproxy';
export * as marketplaceListenerV1 from './gen/platform/marketplacelistener/v1/marketplacelistener';
export * as clustersV1 from './gen/platform/clusters/v1/clusters';
export { protoFilesOf, PROTO_ROOT } from './proto-files';
