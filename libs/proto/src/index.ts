// Generated gRPC contracts (ts-proto). The sources are the .proto files under /proto; `nx run proto:generate`
// writes ./gen, and build, test and lint depend on that target.
export * as common from './gen/platform/common/v1/version';
export * as errorDetail from './gen/platform/common/v1/error';
export * as gatewayV1 from './gen/platform/gateway/v1/gateway';
export * as authzV1 from './gen/platform/authz/v1/authz';
export * as authzRolesV1 from './gen/platform/authz/v1/roles';
export * as orgsTeamsV1 from './gen/platform/orgsteams/v1/orgsteams';
export * as orgsTeamsOrgsV1 from './gen/platform/orgsteams/v1/orgs';
export * as orgsTeamsSettingsV1 from './gen/platform/orgsteams/v1/settings';
export * as orgsTeamsAvatarsV1 from './gen/platform/orgsteams/v1/avatars';
export * as orgTokensV1 from './gen/platform/orgsteams/v1/org_tokens';
export * as orgClaimsV1 from './gen/platform/orgsteams/v1/claims';
export * as contractsLicensingV1 from './gen/platform/contractslicensing/v1/contractslicensing';
export * as contractsV1 from './gen/platform/contractslicensing/v1/contracts';
export * as licensingV1 from './gen/platform/contractslicensing/v1/licensing';
export * as billingDashboardV1 from './gen/platform/billingdashboard/v1/billingdashboard';
export * as outagesV1 from './gen/platform/billingdashboard/v1/outages';
export * as licensedV1 from './gen/platform/billingdashboard/v1/licensed';
export * as summaryV1 from './gen/platform/billingdashboard/v1/summary';
export * as usageReportV1 from './gen/platform/billingdashboard/v1/usage_report';
export * as eventsV1 from './gen/platform/billingdashboard/v1/events';
export * as metricsproxyV1 from './gen/platform/metricsproxy/v1/metricsproxy';
export * as marketplaceListenerV1 from './gen/platform/marketplacelistener/v1/marketplacelistener';
export * as clustersV1 from './gen/platform/clusters/v1/clusters';
export * as clusterSetsV1 from './gen/platform/clusters/v1/cluster_sets';
export * as agentV1 from './gen/platform/agent/v1/agent';
export { protoFilesOf, PROTO_ROOT } from './proto-files';
export * from './permissions';
