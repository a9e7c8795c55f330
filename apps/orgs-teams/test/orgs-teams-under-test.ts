import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

/** A request to create organization `username` by `creatorId`, every other field empty unless `fields` gives it. */
export const orgRequest = (
  creatorId: number,
  username: string,
  fields: Partial<orgsTeamsOrgsV1.CreateOrgRequest> = {},
): orgsTeamsOrgsV1.CreateOrgRequest => ({
  creatorId,
  username,
  fullName: '',
  description: '',
  website: '',
  location: '',
  orgType: '',
  visibility: '',
  managerEndpoint: '',
  ...fields,
});

/** orgs-teams started for a test file, with what its tests call it through. */
export interface OrgsTeamsUnderTest {
  authz: AuthzStub;
  app: AppUnderTest;
  identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  /** The id of `root` (the site admin) and of each user made at the start, by login. */
  ids: Record<string, number>;
  /** Makes a user whose password is `<login>-password` and whose address is `<login>@example.com`; answers its id. */
  createUser(login: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * orgs-teams as its integration tests start it: on a fresh database beside a stand-in authz (authz-stub.ts), its site
 * admin `root` (password `root-password`), and `users` made at once as `createUser` makes them. `env` adds settings or
 * overrides these.
 */
export async function startOrgsTeams(opts: { users?: string[]; env?: Record<string, string> } = {}): Promise<OrgsTeamsUnderTest> {
  const authz = await startAuthzStub();
  const app = await startAppForTest(orgsTeamsApp, {
    AUTHZ_GRPC_ADDR: authz.address,
    PLATFORM_ADMIN_USERNAME: 'root',
    PLATFORM_ADMIN_EMAIL: 'root@example.com',
    PLATFORM_ADMIN_PASSWORD: 'root-password',
    ...opts.env,
  });
  const identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
  const orgs = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, app.address, { name: 'orgs-teams' });
  const ids: Record<string, number> = { root: (await identity.getUser({ id: 0, login: 'root' })).id };
  const createUser = async (login: string) => {
    const user = await identity.createUser({
      username: login,
      email: `${login}@example.com`,
      password: `${login}-password`,
      fullName: '',
      mustChangePassword: false,
      isAdmin: false,
    });
    ids[login] = user.id;
    return user.id;
  };
  for (const login of opts.users ?? []) await createUser(login);
  return {
    authz,
    app,
    identity,
    orgs,
    ids,
    createUser,
    async stop() {
      identity.close();
      orgs.close();
      await app.stop();
      await authz.server.shutdown(100);
    },
  };
}
