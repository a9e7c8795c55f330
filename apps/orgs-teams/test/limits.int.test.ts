import { orgsTeamsOrgsV1, orgsTeamsSettingsV1, orgsTeamsV1, orgTokensV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { orgRequest } from './orgs-teams-under-test';

// orgs-teams is the authority for what it stores: whoever calls it (the gateway checks the same limits
// first), a text over its limit (docs/limits.md) is refused with 400 naming the field and the limit, and
// nothing is stored.

const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('orgs-teams field limits', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  let settings: PromiseClient<typeof orgsTeamsSettingsV1.SiteSettingsServiceService>;
  let tokens: PromiseClient<typeof orgTokensV1.OrgTokensServiceService>;
  let root: number;

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
    });
    const client = <D>(definition: D) => createClient(definition, app.address, { name: 'orgs-teams' });
    orgs = client(orgsTeamsOrgsV1.OrganizationsServiceService);
    identity = client(orgsTeamsV1.OrgsTeamsServiceService);
    settings = client(orgsTeamsSettingsV1.SiteSettingsServiceService);
    tokens = client(orgTokensV1.OrgTokensServiceService);
    root = (await identity.getUser({ id: 0, login: 'root' })).id;
  });
  afterAll(async () => {
    for (const c of [orgs, identity, settings, tokens]) c?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => 'accepted',
      (err) => ({ status: err.httpStatus, message: err.message }),
    );
  const org = (over: Partial<orgsTeamsOrgsV1.CreateOrgRequest>) => orgRequest(root, 'acme', over);

  it('refuses an organization with an over-long text, storing nothing', async () => {
    for (const [field, max] of [
      ['username', 40],
      ['fullName', 100],
      ['description', 255],
      ['website', 255],
      ['location', 50],
      ['managerEndpoint', 1024],
    ] as const) {
      expect(await refusal(orgs.createOrg(org({ [field]: 'x'.repeat(max + 1) })))).toEqual({
        status: 400,
        message: `${field}: at most ${max} characters`,
      });
    }
    expect(await refusal(orgs.createOrg(org({ description: 'd'.repeat(1024 * 1024) })))).toEqual({
      status: 400,
      message: 'description: at most 255 characters',
    });
    expect(await refusal(orgs.getOrg({ name: 'acme', viewerId: root }))).toMatchObject({ status: 404 });
  });

  it('accepts texts at their limits, and refuses over-long edits and teams', async () => {
    const created = await orgs.createOrg(org({ fullName: 'f'.repeat(100), description: 'd'.repeat(255), location: 'l'.repeat(50) }));
    expect(created).toMatchObject({ fullName: 'f'.repeat(100), description: 'd'.repeat(255) });
    expect(await refusal(orgs.editOrg({ orgId: created.id, description: 'd'.repeat(256) }))).toEqual({
      status: 400,
      message: 'description: at most 255 characters',
    });
    expect((await orgs.getOrg({ name: 'acme', viewerId: root })).description).toBe('d'.repeat(255));
    const team = { orgId: created.id, name: 'devs', description: '', permission: 'read', type: 'general' };
    expect(await refusal(orgs.createTeam({ ...team, description: 'd'.repeat(256) }))).toEqual({
      status: 400,
      message: 'description: at most 255 characters',
    });
    expect(await refusal(orgs.createTeam({ ...team, units: { units: ['u'.repeat(65)] } }))).toEqual({
      status: 400,
      message: 'units.units[]: at most 64 characters',
    });
  });

  it('refuses over-long account fields and token names', async () => {
    const user = {
      username: 'carol',
      email: 'carol@example.com',
      password: 'password1',
      fullName: '',
      mustChangePassword: false,
      isAdmin: false,
    };
    expect(await refusal(identity.createUser({ ...user, password: 'p'.repeat(256) }))).toEqual({
      status: 400,
      message: 'password: at most 255 characters',
    });
    expect(await refusal(identity.createUser({ ...user, fullName: 'f'.repeat(101) }))).toEqual({
      status: 400,
      message: 'fullName: at most 100 characters',
    });
    expect(await refusal(identity.getUser({ id: 0, login: 'carol' }))).toMatchObject({ status: 404 });
    expect(await refusal(identity.createToken({ userId: root, name: 'n'.repeat(256), scope: '', scopeAccountId: 0, accessScopes: [] }))).toEqual({
      status: 400,
      message: 'name: at most 255 characters',
    });
    expect(await refusal(tokens.createSyncToken({ orgId: 1, name: 'n'.repeat(256), sha1: '' }))).toEqual({
      status: 400,
      message: 'name: at most 255 characters',
    });
  });

  it('accepts a branding logo longer than the default field bound (the logo has its own limit), and refuses a longer one', async () => {
    // 100 KiB of image is a data URI of about 137,000 characters: above MAX_STRING_FIELD, within the logo's limit.
    const padded = Buffer.concat([Buffer.from(PNG_1x1, 'base64'), Buffer.alloc(100 * 1024)]).toString('base64');
    const answer = await refusal(settings.updateBranding({ userId: root, logo: `data:image/png;base64,${padded}` }));
    expect(answer).toBe('accepted');
    expect(await refusal(settings.updateBranding({ userId: root, logo: 'x'.repeat(1024 * 1024) }))).toEqual({
      status: 400,
      message: expect.stringMatching(/^logo: at most \d+ characters$/),
    });
  });
});
