import { z } from 'zod';
import type { clientOrgsV1 } from '@platform/proto';
import type { Kept } from '../../backends';
import * as p from '../../params';
import { sectionRoutes, type Route } from '../../route';
import { OrganizationJson, orgJson } from '../identity/presenters';
import { webUrl } from '../../web-url';

const route = sectionRoutes({ tag: 'Client organizations', backend: 'clusters' });

// Client organizations (docs/client-organizations.md): site admins only. The organization and its admin user are
// made in orgs-teams, the client organization (hub, imported clusters, settings, cleanup) is kept by clusters, which
// makes all three as one operation.

const free = z.record(z.string(), z.unknown());
const Permission = z.object({
  name: z.string().min(1).meta({ description: 'A cluster set name (isClusterSet) or the hub' }),
  isClusterSet: z.boolean(),
  roleType: z.string(),
  roleRefName: z.string().min(1),
});
const UserOptions = z
  .object({
    userName: p.login,
    email: z.email(),
    permissions: z.array(Permission).max(100),
    importCluster: z.boolean(),
    clientOrg: z.boolean(),
  })
  .meta({ id: 'UserOptions' });

const settings = {
  annotations: z.record(z.string(), z.string()).optional(),
  dbConfig: free.optional().meta({ description: 'Node selector and tolerations of the databases (free-form)' }),
  useGateway: z.boolean().optional(),
  gatewayConfig: free.optional(),
  telemetryParams: free.optional().meta({ description: 'Monitoring cluster and retention periods (free-form)' }),
};

const ClientOrgParams = z
  .object({
    clientOrg: z.object({
      orgName: p.login,
      orgFullName: z.string().max(255).optional(),
      description: z.string().max(1024).optional(),
      website: webUrl(255, "The client organization's website").optional(),
      orgType: z.enum(['public', 'limited', 'private']).optional(),
      visibility: z.enum(['', 'public', 'limited', 'private']).optional(),
      syncToken: z.string().optional().meta({ description: 'Multi-cluster-manager sync token (accepted, not stored)' }),
    }),
    hubClusterUID: z.string().min(1),
    hubClusterOwnerName: z.string().min(1),
    userPermission: UserOptions,
    usableAsShared: z.boolean().optional(),
    gatewayConfigRef: z
      .object({ clientOrg: z.string().min(1) })
      .optional()
      .meta({ description: 'Use the gateway config of this client org' }),
    ...settings,
  })
  .meta({ id: 'ClientOrgParams' });

const HubOf = {
  hubClusterOwnerName: z.string().min(1),
  hubClusterName: z.string().min(1),
  hubClusterUID: z.string().min(1),
  spokeClusterName: z.string().min(1),
};
const AddClusterParams = z.object({ ...HubOf, gatewayPresetRef: free.optional(), ...settings }).meta({ id: 'AddClusterParams' });
const RemoveClusterParams = z.object(HubOf).meta({ id: 'RemoveClusterParams' });

const ClientOrgStatus = z
  .object({ status: z.enum(['Active', 'Deleting', 'Partially Deleted', 'Deleted', 'NotFound']) })
  .meta({ id: 'ClientOrgStatus' });
const Message = z.object({ message: z.string() }).meta({ id: 'ApiResponseMessage' });

/** The organization of a client org as orgs-teams has it (404 when it is gone). */
async function organizationOf(kept: Kept, c: clientOrgsV1.ClientOrg, viewerId: number) {
  return orgJson(await kept.orgsTeams.organizations.getOrg({ name: c.name, viewerId }));
}

const ORG = { org: 'optional' as const };
const ById = z.object({ id: p.id });
const ByName = z.object({ orgname: p.login });

export const clientOrgRoutes: Route[] = [
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/user/clients',
    summary: 'The client organizations',
    auth: 'token',
    ...ORG,
    requires: [{ on: 'site', permission: 'Organization_SiteAdminCanViewClientOrg' }],
    response: { status: 200, schema: z.array(OrganizationJson) },
    async handle(_in, { kept, caller }) {
      const { clientOrgs } = await kept.clusters.clientOrgs.listClientOrgs({});
      const orgs = await Promise.all(clientOrgs.map((c) => organizationOf(kept, c, caller.id).catch(() => undefined)));
      return { body: orgs.filter((o) => o !== undefined) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/user/client/:id',
    summary: 'A client organization',
    auth: 'token',
    ...ORG,
    params: ById,
    requires: [{ on: 'site', permission: 'Organization_SiteAdminCanViewClientOrg' }],
    errors: [{ status: 404, description: 'when no client organization has this id' }],
    response: { status: 200, schema: OrganizationJson },
    async handle({ params }, { kept, caller }) {
      const c = await kept.clusters.clientOrgs.getClientOrg({ orgId: params.id, name: '' });
      return { body: await organizationOf(kept, c, caller.id) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/user/client/:orgname/status',
    summary: "A client organization's status (NotFound when there is none)",
    auth: 'token',
    ...ORG,
    params: ByName,
    requires: [{ on: 'site', permission: 'Organization_SiteAdminCanViewClientOrg' }],
    response: { status: 200, schema: ClientOrgStatus },
    async handle({ params }, { kept }) {
      const { status } = await kept.clusters.clientOrgs.status({ name: params.orgname, cluster: '' });
      return { body: { status: status as z.input<typeof ClientOrgStatus>['status'] } };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/user/client/:orgname/cluster/:cluster/status',
    summary: 'The status of a cluster imported for a client organization (NotFound when it is not)',
    auth: 'token',
    ...ORG,
    params: ByName.extend({ cluster: p.segment }),
    requires: [{ on: 'site', permission: 'Organization_SiteAdminCanViewClientOrg' }],
    response: { status: 200, schema: ClientOrgStatus },
    async handle({ params }, { kept }) {
      const { status } = await kept.clusters.clientOrgs.status({ name: params.orgname, cluster: params.cluster });
      return { body: { status: status as z.input<typeof ClientOrgStatus>['status'] } };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/user/client/create',
    summary: 'Create a client organization: its admin user, the organization, rights on the hub, imported clusters',
    auth: 'token',
    ...ORG,
    requires: [{ on: 'site', permission: 'Organization_SiteAdminCanCreateClientOrg' }],
    body: { schema: ClientOrgParams },
    errors: [
      {
        status: 400,
        description:
          'for a hub that is not the owner’s, one without a multi-cluster-manager endpoint, an unknown or ineligible cluster set, an unknown shared gateway config',
      },
      { status: 409, description: 'when an organization or user of that name exists' },
    ],
    response: { status: 200, schema: OrganizationJson },
    async handle({ body }, { backends, caller }) {
      // One operation in clusters: the admin user, the organization (orgs-teams) and the client record, or nothing.
      const perms = body.userPermission.permissions;
      const { organization } = await backends.clusters.clientOrgs.provisionClientOrg({
        name: body.clientOrg.orgName,
        fullName: body.clientOrg.orgFullName ?? '',
        description: body.clientOrg.description ?? '',
        website: body.clientOrg.website ?? '',
        orgType: body.clientOrg.orgType ?? '',
        visibility: body.clientOrg.visibility ?? '',
        hubUid: body.hubClusterUID,
        hubOwnerName: body.hubClusterOwnerName,
        adminLogin: body.userPermission.userName,
        adminEmail: body.userPermission.email,
        importSets: body.userPermission.importCluster ? perms.filter((x) => x.isClusterSet).map((x) => x.name) : [],
        roleRefs: perms.map((x) => `${x.isClusterSet ? x.name : 'hub'}/${x.roleRefName}`),
        settingsJson: JSON.stringify({
          annotations: body.annotations ?? {},
          dbConfig: body.dbConfig ?? {},
          useGateway: body.useGateway ?? false,
          gatewayConfig: body.gatewayConfig ?? null,
          telemetryParams: body.telemetryParams ?? {},
        }),
        gatewayConfigRef: body.gatewayConfigRef?.clientOrg ?? '',
        usableAsShared: body.usableAsShared ?? false,
        requesterId: caller.id,
      });
      return { body: orgJson(organization!) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/user/client/:orgname/add-cluster',
    summary: 'Import a spoke cluster of the hub for the client organization',
    auth: 'token',
    ...ORG,
    params: ByName,
    requires: [{ on: 'site', permission: 'Organization_SiteAdminCanAddClusterToClientOrg' }],
    body: { schema: AddClusterParams },
    errors: [
      { status: 404, description: 'for an unknown client org' },
      { status: 400, description: 'when already imported, not a managed cluster of its hub, or the org is being deleted' },
    ],
    response: { status: 200, schema: Message },
    async handle({ params, body }, { backends }) {
      const { hubClusterOwnerName: _o, hubClusterName: _n, hubClusterUID, spokeClusterName, ...rest } = body;
      await backends.clusters.clientOrgs.addCluster({
        clientOrg: params.orgname,
        hubUid: hubClusterUID,
        spokeClusterName,
        settingsJson: JSON.stringify(rest),
      });
      return { body: { message: `cluster ${spokeClusterName} imported for ${params.orgname}` } };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/user/client/:orgname/delete-cluster',
    summary: 'Remove an imported cluster from the client organization (cleanup runs asynchronously)',
    auth: 'token',
    ...ORG,
    params: ByName,
    requires: [{ on: 'site', permission: 'Organization_SiteAdminCanRemoveClusterFromClientOrg' }],
    body: { schema: RemoveClusterParams },
    errors: [{ status: 404, description: 'for an unknown client org or a cluster it has not imported' }],
    response: { status: 200, schema: Message },
    async handle({ params, body }, { backends }) {
      await backends.clusters.clientOrgs.removeCluster({
        clientOrg: params.orgname,
        hubUid: body.hubClusterUID,
        spokeClusterName: body.spokeClusterName,
      });
      return { body: { message: `cluster ${body.spokeClusterName} is being removed from ${params.orgname}` } };
    },
  }),
  route({
    method: 'delete',
    scope: 'write:organization',
    path: '/user/client/delete/:id',
    summary: 'Delete a client organization (cleanup runs asynchronously)',
    auth: 'token',
    ...ORG,
    params: ById,
    requires: [{ on: 'site', permission: 'Organization_SiteAdminCanDeleteClientOrg' }],
    errors: [
      { status: 404, description: 'for an unknown id' },
      { status: 400, description: 'while another client org uses its gateway config' },
    ],
    response: { status: 200, schema: Message },
    async handle({ params }, { backends, caller }) {
      const c = await backends.clusters.clientOrgs.deleteClientOrg({ orgId: params.id, requesterId: caller.id });
      return { body: { message: `client organization ${c.name} is being deleted` } };
    },
  }),
];
