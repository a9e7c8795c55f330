/**
 * The names a reader of the API reference sees: the tags operations are grouped under (one per resource, said once
 * per group of rows: `sectionRoutes({ tag })`), and the operationId of every row. Ids follow Gitea's: Gitea's own
 * where the route is a Gitea route (`orgCreate`, `orgListTeams`, `userCreateToken`), the same resource+verb style
 * elsewhere. They are part of the API (clients are generated from them): never rename one.
 */

/** Every tag, in the order the reference and docs/routes.md list them, with its one-line description. */
export const TAGS = {
  Users: 'User accounts: create one (site admin), and who the caller is',
  Tokens: 'Personal access tokens, and the sync, access and bus tokens of an organization',
  'Service accounts': "Accounts other services call the platform with: the site's and each organization's, their roles and tokens",
  Authorization: 'What the caller may do on an object',
  'Custom roles': 'Roles an organization defines from the permission catalog and assigns to teams',
  Organizations: 'Organizations, their members, avatars and claims',
  Teams: 'Teams of an organization, their members and permissions',
  'Site settings': 'Branding, allowed email domains and registration',
  Clusters: 'Hub clusters an organization enrolls',
  'Cluster sets': 'Cluster sets of a hub, their namespaces and feature sets',
  'Client organizations': 'Organizations a hub serves as clients, and the clusters imported for them',
  Contracts: 'Contracts of an account (site admin and account views) and the clusters bound to them',
  Licenses: 'Issuing and registering licenses, the license proxy, the revocation list and the CA',
  'Usage reports': 'Monthly usage of the licensed products, as views, per namespace and as a PDF',
  'Billing dashboard': 'Accounts, clusters, licenses and products that reported, their resources and events, and system outages',
  Marketplaces: 'Marketplace installers and subscriptions, and the metered-billing proxy',
  'Metrics proxy': 'Cluster metrics datasources and the auth hook of the metrics reverse proxy',
  Objects: 'Stored objects (avatar images, contract documents) behind signed URLs',
  Audit: 'The audit trail of administrative changes (site admins)',
  Miscellaneous: 'The platform version',
} as const;

export type Tag = keyof typeof TAGS;

/** The document's `tags` list. */
export const TAG_LIST = (Object.entries(TAGS) as [Tag, string][]).map(([name, description]) => ({ name, description }));

/** The key of a row in OPERATION_IDS. */
export const operationKey = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;

/** operationId per row, keyed by method and Express path; api-document.test.ts checks it covers every row once. */
export const OPERATION_IDS: Record<string, string> = {
  // Miscellaneous, users and their tokens
  'GET /version': 'getVersion',
  'POST /admin/users': 'adminCreateUser',
  'GET /admin/audit-events': 'adminListAuditEvents',
  'GET /user': 'userGetCurrent',
  'POST /users/:username/tokens': 'userCreateToken',
  'GET /users/:username/tokens': 'userGetTokens',
  'DELETE /users/:username/tokens/:id': 'userDeleteAccessToken',
  'DELETE /user/token': 'userSignOut',
  // Service accounts
  'GET /admin/service-accounts': 'adminListServiceAccounts',
  'POST /admin/service-accounts': 'adminCreateServiceAccount',
  'GET /admin/service-accounts/:id': 'adminGetServiceAccount',
  'PATCH /admin/service-accounts/:id': 'adminEditServiceAccount',
  'DELETE /admin/service-accounts/:id': 'adminDeleteServiceAccount',
  'GET /admin/service-accounts/:id/tokens': 'adminListServiceAccountTokens',
  'POST /admin/service-accounts/:id/tokens': 'adminCreateServiceAccountToken',
  'DELETE /admin/service-accounts/:id/tokens/:tokenId': 'adminDeleteServiceAccountToken',
  'GET /orgs/:orgname/service-accounts': 'orgListServiceAccounts',
  'POST /orgs/:orgname/service-accounts': 'orgCreateServiceAccount',
  'GET /orgs/:orgname/service-accounts/:id': 'orgGetServiceAccount',
  'PATCH /orgs/:orgname/service-accounts/:id': 'orgEditServiceAccount',
  'DELETE /orgs/:orgname/service-accounts/:id': 'orgDeleteServiceAccount',
  'GET /orgs/:orgname/service-accounts/:id/tokens': 'orgListServiceAccountTokens',
  'POST /orgs/:orgname/service-accounts/:id/tokens': 'orgCreateServiceAccountToken',
  'DELETE /orgs/:orgname/service-accounts/:id/tokens/:tokenId': 'orgDeleteServiceAccountToken',
  // Authorization and custom roles
  'GET /authz/objects/:objectType/:objID/allowed-permissions': 'authzGetAllowedPermissions',
  'POST /authz/objects/allowed-permissions': 'authzListAllowedPermissions',
  'GET /authz/roles/available_permissions': 'roleListAvailablePermissions',
  'GET /authz/roles': 'roleList',
  'POST /authz/roles': 'roleCreate',
  'GET /authz/roles/:id': 'roleGet',
  'PUT /authz/roles/:id': 'roleEdit',
  'DELETE /authz/roles/:id': 'roleDelete',
  'GET /authz/roles/:id/principals': 'roleListPrincipals',
  // Site settings
  'GET /branding': 'settingsGetBranding',
  'POST /branding': 'settingsEditBranding',
  'GET /allowed-domains': 'settingsListAllowedDomains',
  'POST /allowed-domains': 'settingsAddAllowedDomain',
  'PATCH /allowed-domains': 'settingsRemoveAllowedDomain',
  'GET /disable-registration': 'settingsGetRegistrationDisabled',
  'POST /disable-registration': 'settingsSetRegistrationDisabled',
  // Objects
  'GET /objects/*key': 'objectGet',
  // Organizations
  'GET /orgs/:orgname/avatar/': 'orgGetAvatar',
  'POST /orgs/:orgname/avatar/': 'orgUpdateAvatar',
  'POST /orgs/:orgname/avatar/delete': 'orgDeleteAvatar',
  'PATCH /orgs/claim/:claimID': 'orgClaim',
  'GET /orgs/claim': 'orgGetClaimable',
  'GET /orgs': 'orgGetAll',
  'GET /user/orgs': 'orgListCurrentUserOrgs',
  'GET /users/:username/orgs': 'orgListUserOrgs',
  'GET /users/:username/orgs/:orgname/permissions': 'orgGetUserPermissions',
  'POST /orgs': 'orgCreate',
  'GET /orgs/:orgname': 'orgGet',
  'PATCH /orgs/:orgname': 'orgEdit',
  'DELETE /orgs/:orgname': 'orgDelete',
  'GET /orgs/:orgname/user/:username': 'orgGetUserProfile',
  'GET /orgs/:orgname/is-owner': 'orgIsOwner',
  'GET /orgs/:orgname/members': 'orgListMembers',
  'POST /orgs/:orgname/members/action/private': 'orgMemberActionPrivate',
  'POST /orgs/:orgname/members/action/public': 'orgMemberActionPublic',
  'POST /orgs/:orgname/members/action/remove': 'orgMemberActionRemove',
  'POST /orgs/:orgname/members/action/leave': 'orgMemberActionLeave',
  'POST /orgs/:orgname/members/action/:action': 'orgMemberActionOther',
  'GET /orgs/:orgname/members/:username': 'orgIsMember',
  'DELETE /orgs/:orgname/members/:username': 'orgDeleteMember',
  'GET /orgs/:orgname/public_members': 'orgListPublicMembers',
  'GET /orgs/:orgname/public_members/:username': 'orgIsPublicMember',
  'PUT /orgs/:orgname/public_members/:username': 'orgPublicizeMember',
  'DELETE /orgs/:orgname/public_members/:username': 'orgConcealMember',
  // Tokens of an organization
  'GET /orgs/:orgname/manager/sync-token': 'orgGetSyncToken',
  'POST /orgs/:orgname/manager/sync-token': 'orgCreateSyncToken',
  'DELETE /orgs/:orgname/manager/sync-token': 'orgDeleteSyncToken',
  'GET /orgs/:orgname/manager/user-token': 'orgGetUserToken',
  'POST /orgs/:orgname/manager/user-token': 'orgCreateUserToken',
  'DELETE /orgs/:orgname/manager/user-token': 'orgDeleteUserToken',
  'GET /orgs/:orgname/tokens/access-tokens': 'orgListAccessTokens',
  'DELETE /orgs/:orgname/tokens/access-tokens/:id': 'orgDeleteAccessToken',
  'GET /orgs/:orgname/tokens/bus-tokens': 'orgListBusTokens',
  'POST /orgs/:orgname/tokens/bus-tokens/:id/revoke': 'orgRevokeBusToken',
  // Teams
  'GET /orgs/:orgname/teams': 'orgListTeams',
  'GET /orgs/:orgname/teams/search': 'teamSearch',
  'POST /orgs/:orgname/teams': 'orgCreateTeam',
  'POST /orgs/:orgname/teams/:teamid/action/join': 'orgTeamActionJoin',
  'POST /orgs/:orgname/teams/:teamid/action/leave': 'orgTeamActionLeave',
  'POST /orgs/:orgname/teams/:teamid/action/remove': 'orgTeamActionRemove',
  'POST /orgs/:orgname/teams/:teamid/action/add': 'orgTeamActionAdd',
  'POST /orgs/:orgname/teams/:teamid/action/:action': 'orgTeamActionOther',
  'GET /teams/:teamid': 'orgGetTeam',
  'PATCH /teams/:teamid': 'orgEditTeam',
  'DELETE /teams/:teamid': 'orgDeleteTeam',
  'GET /teams/:teamid/members': 'orgListTeamMembers',
  'GET /teams/:teamid/members/:username': 'orgListTeamMember',
  'PUT /teams/:teamid/members/:username': 'orgAddTeamMember',
  'DELETE /teams/:teamid/members/:username': 'orgRemoveTeamMember',
  // Clusters
  'POST /orgs/:orgname/clusters': 'orgEnrollCluster',
  'GET /orgs/:orgname/clusters': 'orgListClusters',
  // Cluster sets
  'GET /clusters/:owner/:cluster/clustersets': 'clusterSetList',
  'GET /clusters/:owner/:cluster/available-clusters': 'clusterSetListAvailableClusters',
  'GET /clusters/:owner/:cluster/available-clustersets': 'clusterSetListAvailableNames',
  'POST /clusters/:owner/:cluster/clustersets/create': 'clusterSetCreate',
  'POST /clusters/:owner/:cluster/clustersets/delete': 'clusterSetDelete',
  'POST /clusters/:owner/:cluster/clustersets/add': 'clusterSetAddClusters',
  'POST /clusters/:owner/:cluster/clustersets/remove': 'clusterSetRemoveClusters',
  'GET /clusters/:owner/:cluster/clustersets/:clusterset/clusters': 'clusterSetListClusters',
  'GET /clusters/:owner/:cluster/clustersets/:clusterset/clusterlist': 'clusterSetListAddableClusters',
  'GET /clusters/:owner/:cluster/clustersets/:clusterset/auth-info': 'clusterSetGetAuthInfo',
  'GET /clusters/:owner/:cluster/bound-namespaces': 'clusterSetListBoundNamespaces',
  'POST /clusters/:owner/:cluster/bound-namespaces/bind': 'clusterSetBindNamespace',
  'POST /clusters/:owner/:cluster/bound-namespaces/unbind': 'clusterSetUnbindNamespace',
  'GET /clusters/:owner/:cluster/clustersets/:clusterset/featuresets': 'clusterSetListFeatureSets',
  'POST /clusters/:owner/:cluster/clustersets/:clusterset/install-featureset': 'clusterSetInstallFeatureSet',
  'POST /clusters/:owner/:cluster/clustersets/:clusterset/disable-featureset': 'clusterSetDisableFeatureSet',
  'POST /clusters/:owner/:cluster/clustersets/:clusterset/:managedCluster/update-featureset': 'clusterSetUpdateClusterFeatureSet',
  'GET /clusters/:owner/:cluster/clustersets/:clusterset/sync-status/all-features': 'clusterSetGetFeaturesSyncStatus',
  'GET /clusters/:owner/:cluster/clustersets/:clusterset/sync-status/opscenter-features-version': 'clusterSetGetFeaturesVersion',
  'GET /clusters/:owner/:cluster/clustersets/:clusterset/sync-status/:feature': 'clusterSetGetFeatureSyncStatus',
  'GET /clusters/:owner/:cluster/clustersets/:clusterset/auto-update/check': 'clusterSetCheckAutoUpdate',
  'POST /clusters/:owner/:cluster/clustersets/:clusterset/auto-update': 'clusterSetAutoUpdate',
  // Client organizations
  'GET /user/clients': 'clientOrgList',
  'GET /user/client/:id': 'clientOrgGet',
  'GET /user/client/:orgname/status': 'clientOrgGetStatus',
  'GET /user/client/:orgname/cluster/:cluster/status': 'clientOrgGetClusterStatus',
  'POST /user/client/create': 'clientOrgCreate',
  'POST /user/client/:orgname/add-cluster': 'clientOrgAddCluster',
  'POST /user/client/:orgname/delete-cluster': 'clientOrgRemoveCluster',
  'DELETE /user/client/delete/:id': 'clientOrgDelete',
  // Contracts, site-admin view
  'GET /contracts': 'contractList',
  'POST /contracts': 'contractCreate',
  'GET /contracts/available_products': 'contractListProducts',
  'GET /contracts/active/associated-clusters/:clusterID/status': 'contractGetClusterStatus',
  'POST /contracts/active/associated-clusters/batch-status': 'contractGetClusterStatuses',
  'GET /contracts/:id': 'contractGet',
  'PUT /contracts/:id': 'contractEdit',
  'DELETE /contracts/:id': 'contractDelete',
  'POST /contracts/:id/extend': 'contractExtend',
  'POST /contracts/:id/revoke': 'contractRevoke',
  'GET /contracts/:id/document': 'contractGetDocument',
  'GET /contracts/:id/audit': 'contractListAudit',
  'GET /contracts/:id/clusters': 'contractListClusters',
  'POST /contracts/:id/clusters': 'contractBindClusters',
  'GET /contracts/:id/clusters/imported/non-associated': 'contractListUnboundClusters',
  'DELETE /contracts/:id/clusters/:ccID': 'contractUnbindCluster',
  'PATCH /contracts/:id/clusters/:ccID/name': 'contractRenameCluster',
  'PATCH /contracts/:id/clusters/:ccID/tags': 'contractEditClusterTags',
  // Contracts, account view
  'GET /user/contracts': 'userContractList',
  'GET /user/contracts/active-offline-contracts': 'userContractListOffline',
  'POST /user/contracts/assign-cluster': 'userContractAssignCluster',
  'GET /user/contracts/active/associated-with/clusters/:clusterID': 'userContractListBoundToCluster',
  'GET /user/contracts/active/not-associated-with/clusters/:clusterID': 'userContractListNotBoundToCluster',
  'GET /user/contracts/active/associated-clusters': 'userContractListBoundClusters',
  'GET /user/contracts/active/associated-clusters/:clusterID/status': 'userContractGetClusterStatus',
  'POST /user/contracts/active/associated-clusters/batch-status': 'userContractGetClusterStatuses',
  'GET /user/contracts/:id': 'userContractGet',
  'PUT /user/contracts/:id/preferences': 'userContractEditPreferences',
  'GET /user/contracts/:id/audit': 'userContractListAudit',
  'GET /user/contracts/:id/document': 'userContractGetDocument',
  'GET /user/contracts/:id/clusters': 'userContractListClusters',
  'POST /user/contracts/:id/clusters': 'userContractBindClusters',
  'GET /user/contracts/:id/clusters/imported/non-associated': 'userContractListUnboundClusters',
  'DELETE /user/contracts/:id/clusters/:ccID': 'userContractUnbindCluster',
  'PATCH /user/contracts/:id/clusters/:ccID/name': 'userContractRenameCluster',
  'PATCH /user/contracts/:id/clusters/:ccID/tags': 'userContractEditClusterTags',
  // Licenses
  'POST /contracts/:id/clusters/:ccID/issue-license': 'contractIssueLicense',
  'POST /user/contracts/:id/clusters/:ccID/issue-license': 'userContractIssueLicense',
  'POST /license/issue': 'licenseIssue',
  'POST /register': 'licenseRegister',
  'GET /licenses/crl': 'licenseGetRevocationList',
  'GET /licenses/ca': 'licenseGetCA',
  'POST /user/license-proxy': 'licenseCreateProxyInstaller',
  // Usage reports
  'GET /dashboard/summary/generated-months': 'usageListMonths',
  'GET /dashboard/summary/object-quota-history/clusters/:clusterUID/objects/:objectID': 'usageGetObjectQuotaHistory',
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/objects-usage-view': 'usageGetObjectsView',
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/clusters-usage-view': 'usageGetClustersView',
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/namespaces-usage-view': 'usageGetNamespacesView',
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/gks-usage-view': 'usageGetGksView',
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/contracts-usage-view': 'usageGetContractsView',
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/object-quota-history-summaries-view':
    'usageGetQuotaSummariesView',
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/object-quota-history-summaries-view/clusters/:clusterUID/objects/:objectID':
    'usageGetObjectQuotaSummary',
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/objects-cluster-mode-usage-view':
    'usageGetClusterModeView',
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/objects-cluster-mode-usage-view/clusters/:clusterUID/objects/:objectID':
    'usageGetObjectClusterMode',
  'GET /dashboard/summary/:year/:month/download': 'usageDownloadSummary',
  'GET /dbaas/billing/reports/namespaces': 'usageListNamespaceReports',
  'GET /dbaas/billing/reports/clusters/:clusterID/namespaces/:namespaceName': 'usageGetNamespaceReport',
  // Billing dashboard
  'POST /dashboard/system-outages/': 'outageCreate',
  'GET /dashboard/system-outages/report': 'outageGetReport',
  'GET /dashboard/system-outages/tags': 'outageListTags',
  'GET /dashboard/users/': 'dashboardListUsers',
  'GET /dashboard/users/active': 'dashboardListActiveUsers',
  'GET /dashboard/users/inactive': 'dashboardListInactiveUsers',
  'GET /dashboard/users/:uid/clusters/': 'dashboardListUserClusters',
  'GET /dashboard/users/:uid/clusters/active': 'dashboardListUserActiveClusters',
  'GET /dashboard/users/:uid/clusters/:cid': 'dashboardGetUserCluster',
  'GET /dashboard/users/:uid/clusters/:cid/licenses/': 'dashboardListLicenses',
  'GET /dashboard/users/:uid/clusters/:cid/licenses/active': 'dashboardListActiveLicenses',
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid': 'dashboardGetLicense',
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/': 'dashboardListProducts',
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName': 'dashboardGetProduct',
  'GET /dashboard/clusters/:cid/licenses/active': 'dashboardListClusterActiveLicenses',
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName/resources': 'dashboardGetProductResources',
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName/events-histories': 'dashboardGetProductEventsReport',
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName/events/': 'dashboardListProductEvents',
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName/events/raw-event': 'dashboardGetProductRawEvent',
  // Marketplaces
  'POST /marketplaces/installers': 'marketplaceCreateInstaller',
  'GET /marketplaces/installers': 'marketplaceListInstallers',
  'GET /dashboard/marketplaces/subscriptions': 'marketplaceListSubscriptions',
  'GET /dashboard/marketplaces/settings/warnings': 'marketplaceListSettingsWarnings',
  'GET /dashboard/marketplaces/:marketplace/:subscriptionId': 'marketplaceGetSubscription',
  'DELETE /dashboard/marketplaces/:marketplace/:subscriptionId': 'marketplaceRevokeSubscription',
  'GET /dashboard/marketplaces/:marketplace/:subscriptionId/ping': 'marketplacePingSubscription',
  'GET /dashboard/marketplaces/:marketplace/:subscriptionId/audit-logs': 'marketplaceListSubscriptionAuditLogs',
  'POST /proxy/metered-billing/marketplaces/providera/report-usage': 'meteredBillingReportProviderA',
  'GET /proxy/metered-billing/marketplaces/providera/check/readiness': 'meteredBillingCheckProviderA',
  'POST /proxy/metered-billing/marketplaces/providerc/report-usage': 'meteredBillingReportProviderC',
  'GET /proxy/metered-billing/marketplaces/providerc/check/readiness': 'meteredBillingCheckProviderC',
  // Metrics proxy
  'POST /metricsproxy/register': 'metricsRegisterDatasource',
  'POST /metricsproxy/unregister': 'metricsUnregisterDatasource',
  'POST /metricsproxy/flavorb/register': 'metricsRegisterFlavorBDatasource',
  'POST /metricsproxy/flavorb/unregister': 'metricsUnregisterFlavorBDatasource',
  'GET /metricsproxy/auth/:uidcid/*path': 'metricsAuthHook',
};

/** A row's operationId; a row missing from OPERATION_IDS (a test catches it) falls back to its method and path. */
export function operationIdOf(r: { method: string; path: string }): string {
  return (
    OPERATION_IDS[operationKey(r)] ??
    r.method +
      r.path
        .split('/')
        .filter(Boolean)
        .map((s) => s.replace(/^[:*]/, 'by-'))
        .map((s) => s.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase()))
        .map((s) => s.charAt(0).toUpperCase() + s.slice(1))
        .join('')
  );
}
