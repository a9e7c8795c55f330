import { orgsTeamsV1 } from '@platform/proto';
import { bindService, startService, versionOf, type RunningService, type ServiceConfig } from '@platform/service-kit';
import { migrations } from '../migrations';

/** Starts the orgs-teams service: identity: accounts, tokens, organizations, teams and site settings */
export function startOrgsTeams(config: ServiceConfig): Promise<RunningService> {
  return startService(
    {
      name: 'orgs-teams',
      protoPackage: 'orgsteams',
      database: { schema: 'identity', migrations },
      grpc: () => [bindService(orgsTeamsV1.OrgsTeamsServiceService, { getVersion: async () => versionOf('orgs-teams') })],
    },
    config,
  );
}
