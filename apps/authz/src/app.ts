import { authzV1 } from '@platform/proto';
import { bindService, startService, versionOf, type RunningService, type ServiceConfig } from '@platform/service-kit';
import { migrations } from '../migrations';

/** Starts the authz service: authorization: custom roles and relationship tuples */
export function startAuthz(config: ServiceConfig): Promise<RunningService> {
  return startService(
    {
      name: 'authz',
      protoPackage: 'authz',
      database: { schema: 'authz', migrations },
      grpc: () => [bindService(authzV1.AuthzServiceService, { getVersion: async () => versionOf('authz') })],
    },
    config,
  );
}
