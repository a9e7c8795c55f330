import { orgsTeamsAvatarsV1, orgsTeamsOrgsV1, orgsTeamsSettingsV1, orgsTeamsV1, orgTokensV1, serviceAccountsV1 } from '@platform/proto';
import { GROUP_VALUE_LIMIT } from './identity/group-mapping-store';
import { serviceLimits, TEXT_LIMITS as L, withLimits, type ServiceBinding, type ServiceLimits } from '@platform/service-kit';

const orgFields = {
  fullName: L.fullName,
  description: L.description,
  website: L.website,
  location: L.location,
  orgType: L.choice,
  visibility: L.choice,
  managerEndpoint: L.endpoint,
};
/** `<namespace>/<name>` of a Kubernetes ServiceAccount: a DNS label, a slash and a DNS subdomain. */
const KUBERNETES_SUBJECT = 63 + 1 + 253;
const serviceAccountFields = { name: L.login, description: L.description };

const teamFields = {
  name: L.teamName,
  description: L.description,
  permission: L.choice,
  type: L.choice,
  'units.units[]': L.teamUnit,
};

/**
 * The longest text orgs-teams stores in each field of its write RPCs (docs/limits.md): the server refuses
 * longer values with 400 naming the field, before the handler runs. Every other string field of every
 * request is bounded by MAX_STRING_FIELD; lookups by name (an organization, a login) need no tighter
 * bound, since a name longer than any stored one simply finds nothing.
 */
export const ORGS_TEAMS_LIMITS: ServiceLimits[] = [
  serviceLimits(orgsTeamsV1.OrgsTeamsServiceService, {
    createUser: { username: L.login, email: L.email, password: L.password, fullName: L.fullName },
    createToken: { name: L.tokenName },
    signUp: { username: L.login, email: L.email, password: L.password, fullName: L.fullName },
    createGroupMapping: { group: GROUP_VALUE_LIMIT },
    requestPasswordReset: { login: L.email },
    resetPassword: { newPassword: L.password },
  }),
  serviceLimits(orgsTeamsOrgsV1.OrganizationsServiceService, {
    createOrg: { username: L.login, ...orgFields },
    editOrg: orgFields,
    createTeam: teamFields,
    editTeam: teamFields,
  }),
  serviceLimits(orgsTeamsSettingsV1.SiteSettingsServiceService, {
    // Logo and favicon data URIs are longer than MAX_STRING_FIELD; their decoded sizes are checked on top.
    updateBranding: { logo: L.logo, favicon: L.favicon, primaryColor: L.color, appName: L.appName },
  }),
  serviceLimits(orgsTeamsAvatarsV1.AvatarsServiceService, {
    updateAvatar: { source: L.choice, gravatar: L.avatarLookup },
  }),
  serviceLimits(orgTokensV1.OrgTokensServiceService, {
    createSyncToken: { name: L.tokenName, sha1: L.token },
  }),
  serviceLimits(serviceAccountsV1.ServiceAccountsServiceService, {
    createServiceAccount: { ...serviceAccountFields, 'kubernetesSubjects[]': KUBERNETES_SUBJECT },
    editServiceAccount: { ...serviceAccountFields, 'kubernetesSubjects.subjects[]': KUBERNETES_SUBJECT },
    createServiceAccountToken: { name: L.tokenName },
  }),
];

/** The orgs-teams bindings with their limits. */
export const withOrgsTeamsLimits = (bindings: ServiceBinding<any>[]) => withLimits(ORGS_TEAMS_LIMITS, bindings);
