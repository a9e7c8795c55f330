import { orgClaimsV1, orgsTeamsOrgsV1, orgsTeamsV1, orgTokensV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { orgRequest } from './orgs-teams-under-test';

// An organization's machine credentials and claims through orgs-teams' RPCs (docs/organization-tokens.md): the sync
// token's secret signs in as the organization's system admin, whose token list shows it used; deleting the
// organization revokes it; the oldest claimable organization is offered until it is claimed; an unknown or malformed
// claim is 404. The store's own rules: src/org-tokens/org-tokens.int.test.ts; the rows over HTTP:
// apps/gateway/test/org-tokens.test.ts.

describe('organization credentials and claims in orgs-teams', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  let tokens: PromiseClient<typeof orgTokensV1.OrgTokensServiceService>;
  let claims: PromiseClient<typeof orgClaimsV1.OrgClaimsServiceService>;
  let owner: number;
  const createOrg = (username: string, managerEndpoint = '') => orgs.createOrg(orgRequest(owner, username, { managerEndpoint }));

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
    });
    const client = <D>(definition: D) => createClient(definition, app.address, { name: 'orgs-teams' });
    identity = client(orgsTeamsV1.OrgsTeamsServiceService);
    orgs = client(orgsTeamsOrgsV1.OrganizationsServiceService);
    tokens = client(orgTokensV1.OrgTokensServiceService);
    claims = client(orgClaimsV1.OrgClaimsServiceService);
    owner = (
      await identity.createUser({
        username: 'owner',
        email: 'owner@example.com',
        password: 'owner-password',
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      })
    ).id;
  });
  afterAll(async () => {
    for (const c of [identity, orgs, tokens, claims]) c?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it("signs in with the sync token's secret as the system admin, whose token list shows it used", async () => {
    const fleet = await createOrg('fleet', 'https://hub.example.com');
    expect((await tokens.createSyncToken({ orgId: fleet.id, name: 'hub-sync', sha1: '' })).message).toBe('manager sync token created');
    const first = await tokens.getSyncToken({ orgId: fleet.id });
    expect(first).toMatchObject({ orgId: fleet.id, orgName: 'fleet', secretAccessKey: expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect((await identity.authenticate({ token: first.secretAccessKey })).user!.id).toBe(first.userId);
    const listed = await tokens.listSystemAdminTokens({ orgId: fleet.id });
    expect(listed.tokens).toEqual([expect.objectContaining({ name: 'hub-sync', uid: first.userId, hasUsed: true })]);
  });

  it('revokes the machine credentials of a deleted organization with it', async () => {
    const doomed = await createOrg('doomed', 'https://hub.example.com');
    await tokens.createSyncToken({ orgId: doomed.id, name: '', sha1: '' });
    const secret = (await tokens.getSyncToken({ orgId: doomed.id })).secretAccessKey;
    expect((await identity.authenticate({ token: secret })).user).toBeDefined();
    await orgs.deleteOrg({ orgId: doomed.id, requesterId: owner });
    await expect(identity.authenticate({ token: secret })).rejects.toMatchObject({ kind: 'unauthenticated' });
  });

  it('offers the oldest claimable organization until it is claimed; an unknown or malformed claim is 404', async () => {
    const standalone = await createOrg('standalone');
    const { claimId } = await claims.createClaim({ orgId: standalone.id, backoffSeconds: 0, ifAbsent: false });
    expect(await claims.oldestClaimable({})).toEqual({ isClaimable: true, claimId });
    for (const unknown of ['00000000-0000-0000-0000-000000000000', 'not-a-uuid'])
      await expect(claims.claimOrg({ claimId: unknown, userId: owner })).rejects.toMatchObject({ httpStatus: 404 });
    expect(await claims.claimOrg({ claimId, userId: owner })).toEqual({ orgId: standalone.id, orgName: 'standalone' });
    expect(await claims.oldestClaimable({})).toEqual({ isClaimable: false, claimId: '' });
  });
});
