import { gatewayV1 } from '@platform/proto';
import { bindService, defineApp, startService, versionOf } from '@platform/service-kit';
import { closeBackends, connectBackends } from './backends';
import { gatewayEnv, type GatewayConfig } from './config';
import { createGatewayHttp } from './http';
import { ROUTES } from './sections';

/** The gateway: REST /api/v1 translated to gRPC, the listener proxy and the web frontend. */
export const gatewayApp = defineApp({ name: 'gateway', env: gatewayEnv, start: startGateway });

function startGateway(config: GatewayConfig) {
  const backends = connectBackends(config);
  return startService(
    {
      name: 'gateway',
      protoPackage: 'gateway',
      grpc: () => [bindService(gatewayV1.GatewayServiceService, { getVersion: async () => versionOf('gateway') })],
      http: { port: config.HTTP_PORT, handler: ({ log }) => createGatewayHttp({ routes: ROUTES, backends, config, log }) },
      onStop: async () => closeBackends(backends),
    },
    config,
  );
}
