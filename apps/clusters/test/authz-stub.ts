import { authzV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer } from '@platform/service-kit';
import { UnavailableError } from '@platform/errors';

export type Tuple = { user: string; relation: string; object: string };
const key = (t: Tuple) => `${t.user} ${t.relation} ${t.object}`;

/** A stand-in authz for the clusters tests: a real gRPC server keeping the tuples written, failing writes on demand. */
export async function startAuthzStub() {
  const tuples = new Map<string, Tuple>();
  const state = { failWrites: false };
  const server = await startGrpcServer({
    name: 'authz-stub',
    port: 0,
    host: '127.0.0.1',
    services: [
      bindService(authzV1.AuthzServiceService, {
        async writeTuples(req: authzV1.WriteTuplesRequest) {
          if (state.failWrites) throw new UnavailableError('authz is down');
          for (const t of req.deletes) tuples.delete(key(t));
          for (const t of req.writes) tuples.set(key(t), t);
          return {};
        },
      } as never),
    ],
    protoFiles: ['platformadmin/authz/v1/authz.proto'],
    log: createLogger('authz-stub', 'silent'),
  });
  return { server, tuples, state, address: `127.0.0.1:${server.port}` };
}
export type AuthzStub = Awaited<ReturnType<typeof startAuthzStub>>;
