import { orgClaimsV1, orgTokensV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { createTestDatabase, testNatsUrl } from '@platform/testing';
import { startPlatform, type LocalPlatform } from '../src/platform';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * Spec 4.13's machine credentials and claims over HTTP: manager sync tokens (and the deprecated user-token
 * path), the system admin's access tokens, bus tokens, and standalone-organization claims.
 */
describe('organization tokens and claims over HTTP', () => {
  let platform: LocalPlatform;
  let drop: () => Promise<void>;
  let api: (path: string, init?: RequestInit & { json?: unknown; as?: string }) => Promise<{ status: number; body: any }>;
  const tokens: Record<string, string> = {};
  let grpcAddress: string;

  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    platform = await startPlatform({
      DATABASE_URL: db.url,
      NATS_URL: await testNatsUrl(),
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
      DEPLOYMENT_TYPE: 'Hosted',
      RUN_MODE: 'dev',
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_PASSWORD: 'root-password',
    });
    grpcAddress = `127.0.0.1:${platform.apps.get('orgs-teams')!.grpcPort}`;
    api = async (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (init.as) headers.set('authorization', `token ${tokens[init.as]}`);
      if (init.json !== undefined) headers.set('content-type', 'application/json');
      const res = await fetch(`${platform.url}api/v1${path}`, {
        ...init,
        headers,
        body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
        redirect: 'manual',
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const token = async (login: string, password: string) =>
      (await api(`/users/${login}/tokens`, { method: 'POST', headers: { authorization: basic(login, password) }, json: { name: 't' } }))
        .body.sha1;
    tokens.root = await token('root', 'root-password');
    for (const name of ['owner', 'stranger', 'claimer']) {
      await api('/admin/users', {
        method: 'POST',
        as: 'root',
        json: { username: name, email: `${name}@example.com`, password: `${name}-password` },
      });
      tokens[name] = await token(name, `${name}-password`);
    }
    expect(
      (
        await api('/orgs', {
          method: 'POST',
          as: 'owner',
          json: { username: 'fleet', managerManagementClusterEndPoint: 'https://hub.example.com' },
        })
      ).status,
    ).toBe(201);
    expect((await api('/orgs', { method: 'POST', as: 'owner', json: { username: 'plain' } })).status).toBe(201);
  });
  afterAll(async () => {
    await platform?.stop();
    await drop?.();
  });

  it('manages the manager sync token: 404 before, 400 for other origins, secret shown once, removable', async () => {
    expect((await api('/orgs/fleet/manager/sync-token', { as: 'owner' })).status).toBe(404);
    const wrongOrigin = await api('/orgs/plain/manager/sync-token', { method: 'POST', as: 'owner', json: {} });
    expect(wrongOrigin).toEqual({ status: 400, body: { message: 'the organization is not of multi-cluster-manager origin' } });

    const created = await api('/orgs/fleet/manager/sync-token', { method: 'POST', as: 'owner', json: { name: 'hub-sync' } });
    expect(created).toEqual({ status: 200, body: { message: 'manager sync token created' } });
    const first = await api('/orgs/fleet/manager/sync-token', { as: 'owner' });
    expect(first.body).toEqual({
      userID: expect.any(Number),
      orgID: expect.any(Number),
      orgName: 'fleet',
      accessKeyID: expect.any(String),
      secretAccessKey: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    // The deprecated path reads the same token; the secret is not shown a second time.
    const again = await api('/orgs/fleet/manager/user-token', { as: 'owner' });
    expect(again.body).toMatchObject({ accessKeyID: first.body.accessKeyID, secretAccessKey: '' });

    // The secret is a working credential of the organization's system admin.
    const asSystemAdmin = await fetch(`${platform.url}api/v1/user`, { headers: { authorization: `token ${first.body.secretAccessKey}` } });
    expect(((await asSystemAdmin.json()) as { id: number }).id).toBe(first.body.userID);

    const listed = await api('/orgs/fleet/tokens/access-tokens/', { as: 'owner' });
    expect(listed.body).toEqual([expect.objectContaining({ name: 'hub-sync', uid: first.body.userID, token: '', hasUsed: true })]);

    expect((await api('/orgs/fleet/manager/sync-token', { method: 'DELETE', as: 'owner' })).status).toBe(200);
    expect((await api('/orgs/fleet/manager/sync-token', { as: 'owner' })).status).toBe(404);
    expect((await fetch(`${platform.url}api/v1/user`, { headers: { authorization: `token ${first.body.secretAccessKey}` } })).status).toBe(
      401,
    );
  });

  it('refuses non-members with 403 and unknown organizations with 404', async () => {
    expect((await api('/orgs/fleet/manager/sync-token', { as: 'stranger' })).status).toBe(403);
    expect((await api('/orgs/fleet/tokens/access-tokens/', { as: 'stranger' })).status).toBe(403);
    expect((await api('/orgs/fleet/tokens/bus-tokens/', { as: 'stranger' })).status).toBe(403);
    expect((await api('/orgs/nowhere/tokens/bus-tokens/', { as: 'owner' })).status).toBe(404);
    expect((await api('/orgs/fleet/tokens/bus-tokens/')).status).toBe(401);
  });

  it('lists bus tokens with real NATS public keys and persists revocation; 400 without a system admin', async () => {
    expect((await api('/orgs/plain/tokens/bus-tokens/', { as: 'owner' })).status).toBe(400);
    expect((await api('/orgs/plain/tokens/access-tokens/', { as: 'owner' })).status).toBe(400);

    const fleet = (await api('/orgs/fleet', { as: 'owner' })).body;
    const client = createClient(orgTokensV1.OrgTokensServiceService, grpcAddress, { name: 'orgs-teams' });
    const issued = await client.createBusAccount({ orgId: fleet.id, clusterId: 'cluster-1', productName: 'productdb' });
    client.close();

    const listed = await api('/orgs/fleet/tokens/bus-tokens/', { as: 'owner' });
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
    expect((await api(`/orgs/fleet/tokens/bus-tokens/${issued.account!.id}/revoke`, { method: 'POST', as: 'owner' })).status).toBe(200);
    expect((await api('/orgs/fleet/tokens/bus-tokens/', { as: 'owner' })).body[0].revoked).toBe(true);
    expect((await api('/orgs/fleet/tokens/bus-tokens/999999/revoke', { method: 'POST', as: 'owner' })).status).toBe(400);
    expect((await api('/orgs/fleet/tokens/bus-tokens/abc/revoke', { method: 'POST', as: 'owner' })).status).toBe(400);
  });

  it('moves ownership of a claimed standalone organization to the caller: 404 unknown, 409 claimed', async () => {
    expect((await api('/orgs', { method: 'POST', as: 'root', json: { username: 'standalone' } })).status).toBe(201);
    const standalone = (await api('/orgs/standalone', { as: 'root' })).body;
    const claims = createClient(orgClaimsV1.OrgClaimsServiceService, grpcAddress, { name: 'orgs-teams' });
    const { claimId } = await claims.createClaim({ orgId: standalone.id });
    claims.close();

    expect((await api('/orgs/claim/', { as: 'claimer' })).status).toBe(403);
    expect((await api('/orgs/claim/', { as: 'root' })).body).toEqual({ isClaimable: true, claimID: claimId });
    expect((await api('/orgs/claim/00000000-0000-0000-0000-000000000000', { method: 'PATCH', as: 'claimer' })).status).toBe(404);
    expect((await api('/orgs/claim/not-a-uuid', { method: 'PATCH', as: 'claimer' })).status).toBe(404);

    const claimed = await api(`/orgs/claim/${claimId}`, { method: 'PATCH', as: 'claimer' });
    expect(claimed.status).toBe(200);
    expect(claimed.body).toMatchObject({ id: standalone.id, username: 'standalone' });
    expect((await api(`/orgs/claim/${claimId}`, { method: 'PATCH', as: 'stranger' })).status).toBe(409);
    expect((await api('/orgs/claim/', { as: 'root' })).body).toEqual({ isClaimable: false, claimID: '' });

    // The claimer owns it now, on the very next request; the previous owner does not.
    expect((await api('/orgs/standalone/is-owner', { as: 'claimer' })).status).toBe(200);
    expect((await api('/orgs/standalone', { method: 'PATCH', as: 'claimer', json: { description: 'mine now' } })).status).toBe(200);
    expect((await api('/orgs/standalone/is-owner', { as: 'root' })).status).toBe(403);
  });
});
