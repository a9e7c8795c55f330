import { orgClaimsV1, orgTokensV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * An organization's machine credentials and claims over HTTP: manager sync tokens (and the deprecated user-token
 * path), the system admin's access tokens, bus tokens, and standalone-organization claims.
 */
describe('organization tokens and claims over HTTP', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);

  beforeAll(async () => {
    harness = await bootTestPlatform({ DEPLOYMENT_TYPE: 'Hosted', RUN_MODE: 'dev' });
    for (const name of ['owner', 'stranger', 'claimer']) await harness.signUp(name);
    expect(
      (await api('owner', 'POST', '/orgs', { username: 'fleet', managerManagementClusterEndPoint: 'https://hub.example.com' })).status,
    ).toBe(201);
    expect((await api('owner', 'POST', '/orgs', { username: 'plain' })).status).toBe(201);
  }, 120_000);
  afterAll(() => harness?.stop());

  it('manages the manager sync token: 404 before, 400 for other origins, secret shown once, removable', async () => {
    expect((await api('owner', 'GET', '/orgs/fleet/manager/sync-token')).status).toBe(404);
    const wrongOrigin = await api('owner', 'POST', '/orgs/plain/manager/sync-token', {});
    expect(wrongOrigin).toEqual({
      status: 400,
      body: { message: 'the organization is not of multi-cluster-manager origin', url: expect.any(String) },
    });

    const created = await api('owner', 'POST', '/orgs/fleet/manager/sync-token', { name: 'hub-sync' });
    expect(created).toEqual({ status: 200, body: { message: 'manager sync token created' } });
    const first = await api('owner', 'GET', '/orgs/fleet/manager/sync-token');
    expect(first.body).toEqual({
      userID: expect.any(Number),
      orgID: expect.any(Number),
      orgName: 'fleet',
      accessKeyID: expect.any(String),
      secretAccessKey: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    // The deprecated path reads the same token; the secret is not shown a second time.
    const again = await api('owner', 'GET', '/orgs/fleet/manager/user-token');
    expect(again.body).toMatchObject({ accessKeyID: first.body.accessKeyID, secretAccessKey: '' });

    // The secret is a working credential of the organization's system admin.
    const asSystemAdmin = { authorization: `token ${first.body.secretAccessKey}` };
    expect((await api(undefined, 'GET', '/user', undefined, asSystemAdmin)).body.id).toBe(first.body.userID);

    const listed = await api('owner', 'GET', '/orgs/fleet/tokens/access-tokens/');
    expect(listed.body).toEqual([expect.objectContaining({ name: 'hub-sync', uid: first.body.userID, token: '', hasUsed: true })]);

    expect((await api('owner', 'DELETE', '/orgs/fleet/manager/sync-token')).status).toBe(200);
    expect((await api('owner', 'GET', '/orgs/fleet/manager/sync-token')).status).toBe(404);
    expect((await api(undefined, 'GET', '/user', undefined, asSystemAdmin)).status).toBe(401);
  });

  it('revokes the machine credentials of a deleted organization with it', async () => {
    expect(
      (await api('owner', 'POST', '/orgs', { username: 'doomed', managerManagementClusterEndPoint: 'https://hub.example.com' })).status,
    ).toBe(201);
    expect((await api('owner', 'POST', '/orgs/doomed/manager/sync-token', {})).status).toBe(200);
    const secret = (await api('owner', 'GET', '/orgs/doomed/manager/sync-token')).body.secretAccessKey;
    expect((await api(undefined, 'GET', '/user', undefined, { authorization: `token ${secret}` })).status).toBe(200);

    expect((await api('owner', 'DELETE', '/orgs/doomed')).status).toBe(204);
    expect((await api(undefined, 'GET', '/user', undefined, { authorization: `token ${secret}` })).status).toBe(401);
  });

  it('refuses non-members with 403 and unknown organizations with 404', async () => {
    expect((await api('stranger', 'GET', '/orgs/fleet/manager/sync-token')).status).toBe(403);
    expect((await api('stranger', 'GET', '/orgs/fleet/tokens/access-tokens/')).status).toBe(403);
    expect((await api('stranger', 'GET', '/orgs/fleet/tokens/bus-tokens/')).status).toBe(403);
    expect((await api('owner', 'GET', '/orgs/nowhere/tokens/bus-tokens/')).status).toBe(404);
    expect((await api(undefined, 'GET', '/orgs/fleet/tokens/bus-tokens/')).status).toBe(401);
  });

  it('lists bus tokens with real NATS public keys and persists revocation; 400 without a system admin', async () => {
    expect((await api('owner', 'GET', '/orgs/plain/tokens/bus-tokens/')).status).toBe(400);
    expect((await api('owner', 'GET', '/orgs/plain/tokens/access-tokens/')).status).toBe(400);

    const fleet = (await api('owner', 'GET', '/orgs/fleet')).body;
    const client = createClient(orgTokensV1.OrgTokensServiceService, harness.grpcAddress('orgs-teams'), { name: 'orgs-teams' });
    const issued = await client.createBusAccount({ orgId: fleet.id, clusterId: 'cluster-1', productName: 'productdb' });
    client.close();

    const listed = await api('owner', 'GET', '/orgs/fleet/tokens/bus-tokens/');
    expect(listed.body).toEqual([
      {
        id: issued.account!.id,
        uid: expect.any(Number),
        accountType: 'user',
        busPubKey: expect.stringMatching(/^U[A-Z2-7]{55}$/),
        clusterID: 'cluster-1',
        productName: 'productdb',
        revoked: false,
      },
    ]);
    expect((await api('owner', 'POST', `/orgs/fleet/tokens/bus-tokens/${issued.account!.id}/revoke`)).status).toBe(200);
    expect((await api('owner', 'GET', '/orgs/fleet/tokens/bus-tokens/')).body[0].revoked).toBe(true);
    expect((await api('owner', 'POST', '/orgs/fleet/tokens/bus-tokens/999999/revoke')).status).toBe(400);
    expect((await api('owner', 'POST', '/orgs/fleet/tokens/bus-tokens/abc/revoke')).status).toBe(400);
  });

  it('moves ownership of a claimed standalone organization to the caller: 404 unknown, 409 claimed', async () => {
    expect((await api('root', 'POST', '/orgs', { username: 'standalone' })).status).toBe(201);
    const standalone = (await api('root', 'GET', '/orgs/standalone')).body;
    const claims = createClient(orgClaimsV1.OrgClaimsServiceService, harness.grpcAddress('orgs-teams'), { name: 'orgs-teams' });
    const { claimId } = await claims.createClaim({ orgId: standalone.id, backoffSeconds: 0, ifAbsent: false });
    claims.close();

    expect((await api('claimer', 'GET', '/orgs/claim/')).status).toBe(403);
    expect((await api('root', 'GET', '/orgs/claim/')).body).toEqual({ isClaimable: true, claimID: claimId });
    expect((await api('claimer', 'PATCH', '/orgs/claim/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect((await api('claimer', 'PATCH', '/orgs/claim/not-a-uuid')).status).toBe(404);

    const claimed = await api('claimer', 'PATCH', `/orgs/claim/${claimId}`);
    expect(claimed.status).toBe(200);
    expect(claimed.body).toMatchObject({ id: standalone.id, username: 'standalone' });
    expect((await api('stranger', 'PATCH', `/orgs/claim/${claimId}`)).status).toBe(409);
    expect((await api('root', 'GET', '/orgs/claim/')).body).toEqual({ isClaimable: false, claimID: '' });

    // The claimer owns it now, on the very next request; the previous owner does not.
    expect((await api('claimer', 'GET', '/orgs/standalone/is-owner')).status).toBe(200);
    expect((await api('claimer', 'PATCH', '/orgs/standalone', { description: 'mine now' })).status).toBe(200);
    expect((await api('root', 'GET', '/orgs/standalone/is-owner')).status).toBe(403);
  });
});
