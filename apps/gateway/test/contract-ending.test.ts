import { NotFoundError } from '@platform/errors';
import { contractsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The end of a contract at the edge (docs/contracts.md): a site admin revokes and deletes it, contracts-licensing
// asked for that contract as the caller; an unknown one is its 404 passed on; anyone else 403, nothing asked; a
// revoked contract read back as revoked.
// What revoking and deleting do to the contract, its audit trail, the active offline list and a shared document:
// apps/contracts-licensing/test/contracts.int.test.ts.

const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true });
const OLIVIA = orgsTeamsV1.User.fromPartial({ id: 2, login: 'olivia', active: true });
const CONTRACT = 7;

describe('the end of a contract', () => {
  let backends: FakeBackends;
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    const known = async ({ id }: { id: number }) => {
      if (id !== CONTRACT) throw new NotFoundError(`contract ${id} does not exist`);
      return {};
    };
    backends = await startFakeBackends({
      orgsTeams: { identity: { authenticate: tokenIsLogin([ROOT, OLIVIA]) } },
      authz: { authz: { checkPermission: async ({ userId }) => ({ allowed: userId === ROOT.id, dependsOn: [] }) } },
      contractsLicensing: {
        contracts: {
          revokeContract: known,
          deleteContract: known,
          getContract: async ({ id }) => {
            if (id !== CONTRACT) throw new NotFoundError(`contract ${id} does not exist`);
            return contractsV1.Contract.fromPartial({ id: CONTRACT, product: 'productbackup', revoked: true });
          },
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, DEPLOYMENT_TYPE: 'Hosted', PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });
  beforeEach(() => backends.contractsLicensing.reset());

  const call = async (who: string, method: string, path: string) =>
    (await fetch(`${base}/api/v1${path}`, { method, headers: { authorization: `token ${who}` } })).status;

  it('revokes a contract for a site admin: 200; 404 for an unknown one; 403 to others, nothing asked', async () => {
    expect(await call('olivia', 'POST', `/contracts/${CONTRACT}/revoke`)).toBe(403);
    expect(backends.contractsLicensing.calls).toEqual([]);
    expect(await call('root', 'POST', `/contracts/${CONTRACT}/revoke`)).toBe(200);
    expect(backends.contractsLicensing.callsTo('contracts', 'revokeContract')).toEqual([{ id: CONTRACT, ownerId: 0, actor: 'root' }]);
    expect(await call('root', 'POST', '/contracts/999999/revoke')).toBe(404);
  });

  it('deletes a contract for a site admin: 200; 404 for an unknown one; 403 to others, nothing asked', async () => {
    expect(await call('olivia', 'DELETE', `/contracts/${CONTRACT}`)).toBe(403);
    expect(backends.contractsLicensing.calls).toEqual([]);
    expect(await call('root', 'DELETE', `/contracts/${CONTRACT}`)).toBe(200);
    expect(backends.contractsLicensing.callsTo('contracts', 'deleteContract')).toEqual([{ id: CONTRACT, ownerId: 0, actor: 'root' }]);
    expect(await call('root', 'DELETE', '/contracts/999999')).toBe(404);
  });

  it('answers a revoked contract as revoked', async () => {
    const res = await fetch(`${base}/api/v1/contracts/${CONTRACT}`, { headers: { authorization: 'token root' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: CONTRACT, revoked: true });
  });
});
