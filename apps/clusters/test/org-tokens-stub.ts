import { NotFoundError, UnavailableError } from '@platform/errors';
import { orgTokensV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer } from '@platform/service-kit';

/** A bus account the stand-in knows: the organization whose system admin holds it, the hub it was issued for, revoked or not. */
export interface StubAccount {
  orgId: number;
  clusterId: string;
  revoked: boolean;
}

/**
 * A stand-in orgs-teams for the clusters tests: a real gRPC server answering `GetBusAccountByKey` from a map
 * (public key → account), NotFound for any other key, and Unavailable while `state.down`.
 */
export async function startOrgTokensStub() {
  const accounts = new Map<string, StubAccount>();
  const state = { down: false, calls: 0 };
  let nextId = 1;
  const ids = new Map<string, number>();
  const server = await startGrpcServer({
    name: 'org-tokens-stub',
    port: 0,
    host: '127.0.0.1',
    services: [
      bindService(orgTokensV1.OrgTokensServiceService, {
        async getBusAccountByKey(req: orgTokensV1.GetBusAccountByKeyRequest): Promise<orgTokensV1.BusAccountOwner> {
          state.calls++;
          if (state.down) throw new UnavailableError('orgs-teams is down');
          const a = accounts.get(req.busPubKey);
          if (!a) throw new NotFoundError('no bus account holds this public key');
          if (!ids.has(req.busPubKey)) ids.set(req.busPubKey, nextId++);
          return {
            account: {
              id: ids.get(req.busPubKey)!,
              uid: 1000 + a.orgId,
              accountType: 'user',
              busPubKey: req.busPubKey,
              clusterId: a.clusterId,
              productName: '',
              revoked: a.revoked,
            },
            orgId: a.orgId,
          };
        },
      } as never),
    ],
    protoFiles: ['platformadmin/orgsteams/v1/org_tokens.proto'],
    log: createLogger('org-tokens-stub', 'silent'),
  });
  return { server, accounts, state, address: `127.0.0.1:${server.port}` };
}
export type OrgTokensStub = Awaited<ReturnType<typeof startOrgTokensStub>>;
