/**
 * The bare baseline of `bench/grpc-check.ts`: a grpc-js server with the generated AuthzService definition whose
 * Check answers `{allowed: true}` at once, nothing else (no credentials, no policy, no telemetry). Listens on
 * loopback at the port given as its argument; its health is a GetVersion that answers.
 */
import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { authzV1 } from '@platform/proto';

const server = new Server();
server.addService(authzV1.AuthzServiceService as unknown as ServiceDefinition, {
  check: (_call: unknown, callback: (err: null, res: authzV1.CheckResponse) => void) => callback(null, { allowed: true, dependsOn: [] }),
} as UntypedServiceImplementation);
server.bindAsync(`127.0.0.1:${process.argv[2]}`, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
});
