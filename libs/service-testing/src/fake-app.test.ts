import { status } from '@grpc/grpc-js';
import { NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1 } from '@platform/proto';
import { appCredential, createClients } from '@platform/service-kit';
import { callAsStranger } from './grpc-probes';
import { startFakeApp, type FakeApp } from './fake-app';

const SERVICES = { organizations: orgsTeamsOrgsV1.OrganizationsServiceService };

describe('a stand-in app', () => {
  let app: FakeApp<typeof SERVICES>;
  let clients: ReturnType<typeof createClients<typeof SERVICES>>;

  beforeAll(async () => {
    app = await startFakeApp('orgs-teams', SERVICES, {
      organizations: {
        getOrg: async ({ name }) => {
          if (name !== 'acme') throw new NotFoundError(`organization ${name} does not exist`);
          return orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'acme' });
        },
      },
    });
    clients = createClients(SERVICES, app.address, { name: 'orgs-teams', deadlineMs: 2_000 });
  });
  afterAll(async () => {
    clients?.organizations.close();
    await app?.close();
  });
  beforeEach(() => app.reset());

  it('answers what the test gave, failures included, and records each request', async () => {
    expect(await clients.organizations.getOrg({ name: 'acme', viewerId: 3 })).toMatchObject({ id: 10, username: 'acme' });
    await expect(clients.organizations.getOrg({ name: 'globex', viewerId: 3 })).rejects.toThrow(NotFoundError);
    expect(app.callsTo('organizations', 'getOrg').map((r) => [r.name, r.viewerId])).toEqual([
      ['acme', 3],
      ['globex', 3],
    ]);
  });

  it('answers every other method with its empty message', async () => {
    expect(await clients.organizations.listTeams({ orgId: 10, page: undefined })).toEqual({ teams: [], total: 0 });
    expect(app.calls.map((c) => c.method)).toEqual(['organizations.listTeams']);
  });

  it('takes another answer for one test, and goes back to the first on reset', async () => {
    app.answer('organizations', 'getOrg', async () => orgsTeamsOrgsV1.Organization.fromPartial({ id: 11, username: 'other' }));
    expect(await clients.organizations.getOrg({ name: 'acme', viewerId: 0 })).toMatchObject({ id: 11 });
    app.reset();
    expect(app.calls).toEqual([]);
    expect(await clients.organizations.getOrg({ name: 'acme', viewerId: 0 })).toMatchObject({ id: 10 });
  });

  it('holds its callers to the methods’ real policies: a stranger is refused, an app answered', async () => {
    const stranger = await callAsStranger(app.address, SERVICES.organizations, 'getOrg', { name: 'acme', viewerId: 0 });
    expect(stranger).toMatchObject({ code: status.UNAUTHENTICATED });
    const asApp = await callAsStranger(
      app.address,
      SERVICES.organizations,
      'getOrg',
      { name: 'acme', viewerId: 0 },
      {
        authorization: `Bearer ${appCredential().token()}`,
      },
    );
    expect(asApp).toMatchObject({ code: status.OK, response: { username: 'acme' } });
  });
});
