import { clientOrgsV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { ClientOrgs } from './client-orgs';
import type { ClientOrgProvisioning } from './provisioning';

/** The ClientOrgsService methods that change nothing; every other one is a write, announced (clusters-changed.ts). */
export const CLIENT_ORGS_READS: readonly (keyof typeof clientOrgsV1.ClientOrgsServiceService)[] = [
  'getClientOrg',
  'listClientOrgs',
  'status',
];

/** The ClientOrgsService binding: one line per RPC of proto/platformadmin/clusters/v1/client_orgs.proto. */
export function clientOrgsService(
  orgs: ClientOrgs,
  provisioning: ClientOrgProvisioning,
): ServiceBinding<typeof clientOrgsV1.ClientOrgsServiceService> {
  return bindService(clientOrgsV1.ClientOrgsServiceService, {
    provisionClientOrg: (req, ctx) => provisioning.provision(req, ctx),
    createClientOrg: (req) => orgs.create(req),
    getClientOrg: (req) => orgs.get(req.orgId, req.name),
    listClientOrgs: async () => ({ clientOrgs: await orgs.list() }),
    status: async (req) => ({ status: await orgs.status(req.name, req.cluster) }),
    addCluster: (req) => orgs.addCluster(req),
    removeCluster: (req) => orgs.removeCluster(req),
    deleteClientOrg: (req) => orgs.delete(req.orgId, req.requesterId),
  });
}
