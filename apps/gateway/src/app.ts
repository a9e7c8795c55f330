import { gatewayV1 } from '@platform/proto';
import { bindService, busCheck, defineApp, startService, versionOf } from '@platform/service-kit';
import { migrations } from '../migrations';
import { flushAuditTrail } from './audit';
import { addressFailureLimits } from './authentication';
import { closeBackends, connectBackends } from './backends';
import { gatewayEnv, type GatewayConfig } from './config';
import { createGatewayHttp } from './http';
import { backendChecks } from './operations';
import { ROUTES } from './sections';
import { openFgaApi, type OpenFgaApi } from './sections/openfga/api';
import { SharedSignInFailures } from './sign-in-failures';

/** Its schema and the migrations that make it. */
const DATABASE = { schema: 'gateway', migrations, serverOnly: true };

/** The gateway: REST /api/v1 translated to gRPC, OpenFGA's API for service accounts, the listener proxy and the web frontend. */
export const gatewayApp = defineApp({ name: 'gateway', env: gatewayEnv, database: DATABASE, start: startGateway });

function startGateway(config: GatewayConfig) {
  const { backends, readModel } = connectBackends(config, true);
  const checks = backendChecks(config);
  let openfga: OpenFgaApi | undefined;
  let unfollowReadModels: (() => Promise<void>) | undefined;
  let addressFailures: SharedSignInFailures | undefined;
  return startService(
    {
      name: 'gateway',
      protoPackage: 'gateway',
      // Failed sign-ins per client address are counted in Postgres, where every replica sees them, when there is a
      // Postgres server. The embedded database is one process's, and one process is one gateway: it counts in memory.
      database: config.DATABASE_URL ? DATABASE : undefined,
      // Only for the notices that evict cached tokens; without the bus, tokens are simply not cached.
      bus: 'notices',
      // It keeps nothing another process reads, so it announces nothing, and its replicas send no heartbeats.
      sendsNotices: false,
      grpc: () => [bindService(gatewayV1.GatewayServiceService, { getVersion: async () => versionOf('gateway') })],
      http: {
        port: config.HTTP_PORT,
        host: config.HTTP_HOST,
        async handler({ log, bus, db }) {
          // What the gateway reads through its backends' read models (their owners' packages).
          unfollowReadModels = await readModel.follow(bus!);
          // The bus is reported by /readyz but not required: without it tokens are only not cached.
          const busState = bus ? [{ ...busCheck(bus), required: false }] : [];
          if (db) addressFailures = new SharedSignInFailures(db, addressFailureLimits(config), log);
          openfga = openFgaApi(config, log);
          return createGatewayHttp({
            routes: ROUTES,
            backends,
            config,
            log,
            checks: [...busState, ...checks],
            forgetTokens: readModel.forgetTokens,
            addressFailures,
            openfga,
          });
        },
      },
      onStop: async () => {
        await unfollowReadModels?.();
        // The audit events of the last answers, before the clients close.
        await flushAuditTrail(backends.orgsTeams.audit);
        addressFailures?.close();
        openfga?.close();
        closeBackends(backends);
        for (const check of checks) check.close();
      },
    },
    config,
  );
}
