import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { orgClaimsV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { basic, bootTestPlatform, type TestPlatform } from './harness';

// Caching whom a token belongs to must not trade correctness away. A token deleted through the API,
// a member removed from an organization and a role taken from a team are refused on the very next request,
// also when the gateway has just answered that token (and so has it cached); so are a deleted organization's machine
// credentials, a claimed organization's previous owner, and a removed member at the metrics auth hook, which also
// answers a registration's new client organization at once.

/** A flavor A dashboard API that takes every registration (finds nothing, makes and deletes anything). */
async function startAcceptingDashboard(): Promise<{ url: string; close(): void }> {
  const server = http.createServer((req, res) => {
    const found = req.method !== 'GET';
    req.resume().on('end', () => res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' }).end(found ? '{"id":1}' : '{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

describe('what is revoked is refused on the next request (gateway token cache)', () => {
  let t: TestPlatform;
  let dashboard: Awaited<ReturnType<typeof startAcceptingDashboard>>;
  beforeAll(async () => {
    dashboard = await startAcceptingDashboard();
    t = await bootTestPlatform(
      { FLAVORA_URL: dashboard.url, FLAVORA_TOKEN: 'sa-token' },
      { apps: ['authz', 'orgs-teams', 'clusters', 'metricsproxy'] },
    );
    for (const login of ['alice', 'bob']) await t.signUp(login);
    expect((await t.api('alice', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    dashboard?.close();
  });

  it('refuses a deleted personal token at once', async () => {
    const created = await t.send(undefined, 'POST', '/users/bob/tokens', JSON.stringify({ name: 'short-lived' }), {
      authorization: basic('bob', 'bob-password'),
      'content-type': 'application/json',
    });
    expect(created.status).toBe(201);
    const token = created.body.sha1 as string;
    const me = () => fetch(`${t.platform.url}api/v1/user`, { headers: { authorization: `token ${token}` } });
    // Answered twice: the second answer comes from the cache.
    expect((await me()).status).toBe(200);
    expect((await me()).status).toBe(200);
    const deleted = await t.send(undefined, 'DELETE', `/users/bob/tokens/${created.body.id}`, undefined, {
      authorization: basic('bob', 'bob-password'),
    });
    expect(deleted.status).toBe(204);
    expect((await me()).status).toBe(401);
  });

  it('refuses a removed member at once', async () => {
    const teams = (await t.api('alice', 'GET', '/orgs/acme/teams')).body as { id: number; name: string }[];
    const owners = teams.find((x) => x.name === 'Owners')!.id;
    const devs = (await t.api('alice', 'POST', '/orgs/acme/teams', { name: 'devs', type: 'general' })).body.id;
    expect((await t.api('alice', 'PUT', `/teams/${devs}/members/bob`)).status).toBe(204);
    expect((await t.api('bob', 'GET', '/orgs/acme/teams')).status).toBe(200);
    expect((await t.api('alice', 'DELETE', '/orgs/acme/members/bob')).status).toBe(204);
    expect((await t.api('bob', 'GET', '/orgs/acme/teams')).status).toBe(403);
    expect(owners).toBeGreaterThan(0);
  });

  it('refuses a role taken from a team at once', async () => {
    const ops = (await t.api('alice', 'POST', '/orgs/acme/teams', { name: 'ops', type: 'general' })).body.id;
    const role = await t.api('alice', 'POST', '/authz/roles?org=acme', {
      name: 'editors',
      permissions: [{ namespace: 'org', action: 'edit' }],
      teamIDs: [ops],
    });
    expect(role.status).toBe(201);
    expect((await t.api('alice', 'PUT', `/teams/${ops}/members/bob`)).status).toBe(204);
    expect((await t.api('bob', 'PATCH', '/orgs/acme', { description: 'by bob' })).status).toBe(200);
    expect((await t.api('alice', 'PATCH', `/teams/${ops}`, { name: 'ops', assignedRoleIDs: [] })).status).toBe(200);
    expect((await t.api('bob', 'PATCH', '/orgs/acme', { description: 'by bob again' })).status).toBe(403);
  });

  it('shows an organization’s edit, its hiding and its deletion on the next request (orgs-teams organization cache)', async () => {
    expect((await t.api('alice', 'POST', '/orgs', { username: 'cached' })).status).toBe(201);
    // Read twice by a stranger: the second read is answered from the cache.
    expect((await t.api('bob', 'GET', '/orgs/cached')).body.description).toBe('');
    expect((await t.api('bob', 'GET', '/orgs/cached')).status).toBe(200);
    expect((await t.api('alice', 'PATCH', '/orgs/cached', { description: 'changed' })).status).toBe(200);
    expect((await t.api('bob', 'GET', '/orgs/cached')).body.description).toBe('changed');
    expect((await t.api('alice', 'PATCH', '/orgs/cached', { visibility: 'private' })).status).toBe(200);
    expect((await t.api('bob', 'GET', '/orgs/cached')).status).toBe(404);
    expect((await t.api('alice', 'GET', '/orgs/cached')).status).toBe(200);
    expect((await t.api('alice', 'DELETE', '/orgs/cached')).status).toBe(204);
    expect((await t.api('alice', 'GET', '/orgs/cached')).status).toBe(404);
    // The name is free again at once, and the new organization is not the old one.
    expect((await t.api('bob', 'POST', '/orgs', { username: 'cached' })).status).toBe(201);
    expect((await t.api('alice', 'GET', '/orgs/cached')).body.description).toBe('');
  });

  it('hides a private organization from a member removed from it on the next request (gateway organization cache)', async () => {
    expect((await t.api('alice', 'POST', '/orgs', { username: 'secretive', visibility: 'private' })).status).toBe(201);
    const teams = (await t.api('alice', 'GET', '/orgs/secretive/teams')).body as { id: number; name: string }[];
    const owners = teams.find((x) => x.name === 'Owners')!.id;
    const crew = (await t.api('alice', 'POST', '/orgs/secretive/teams', { name: 'crew', type: 'general' })).body.id;
    expect((await t.api('alice', 'PUT', `/teams/${crew}/members/bob`)).status).toBe(204);
    // Looked up twice by the member: the second answer is kept by the gateway.
    expect((await t.api('bob', 'GET', '/orgs/secretive')).status).toBe(200);
    expect((await t.api('bob', 'GET', '/orgs/secretive/members')).status).toBe(200);
    expect((await t.api('alice', 'DELETE', '/orgs/secretive/members/bob')).status).toBe(204);
    expect((await t.api('bob', 'GET', '/orgs/secretive')).status).toBe(404);
    expect((await t.api('bob', 'GET', '/orgs/secretive/members')).status).toBe(404);
    expect(owners).toBeGreaterThan(0);
  });

  it('shows a team’s edit, the custom roles it is given and loses, and its deletion in the teams list and the team on the next request (orgs-teams teams-list cache, the gateway’s teams)', async () => {
    type TeamJson = { id: number; name: string; role_ids?: number[]; organization: { description: string } };
    const list = async () => (await t.api('alice', 'GET', '/orgs/acme/teams')).body as TeamJson[];
    /** The team as the list shows it; the team's own GET (kept as well) answers the same, or 404 once it is gone. */
    const team = async (id: number) => {
      const listed = (await list()).find((x) => x.id === id);
      const own = await t.api('alice', 'GET', `/teams/${id}`);
      if (listed) expect(own.body).toEqual(listed);
      else expect(own.status).toBe(404);
      return listed;
    };
    const qa = (await t.api('alice', 'POST', '/orgs/acme/teams', { name: 'qa', type: 'general' })).body.id as number;
    // Read twice: the second list is answered from the cache.
    expect((await team(qa))?.name).toBe('qa');
    expect((await team(qa))?.role_ids).toBeUndefined();

    expect((await t.api('alice', 'PATCH', `/teams/${qa}`, { name: 'quality' })).status).toBe(200);
    expect((await team(qa))?.name).toBe('quality');

    // Roles are authz's: given and taken through the roles API, not through orgs-teams.
    const role = await t.api('alice', 'POST', '/authz/roles?org=acme', {
      name: 'testers',
      permissions: [{ namespace: 'org', action: 'edit' }],
      teamIDs: [qa],
    });
    expect(role.status).toBe(201);
    expect((await team(qa))?.role_ids).toEqual([role.body.id]);
    // The role's principals name the team as it is now (the gateway keeps team names, evicted by the same notice).
    const principalName = async () =>
      (
        (await t.api('alice', 'GET', `/authz/roles/${role.body.id}/principals?org=acme`)).body as {
          type: string;
          id: number;
          name?: string;
        }[]
      ).find((x) => x.type === 'team' && x.id === qa)?.name;
    expect(await principalName()).toBe('quality');
    expect((await t.api('alice', 'PATCH', `/teams/${qa}`, { name: 'qa-team' })).status).toBe(200);
    expect(await principalName()).toBe('qa-team');
    expect((await t.api('alice', 'PATCH', `/teams/${qa}`, { name: 'quality' })).status).toBe(200);
    expect((await t.api('alice', 'PUT', `/authz/roles/${role.body.id}?org=acme`, { teamIDs: [] })).status).toBe(200);
    expect((await team(qa))?.role_ids).toBeUndefined();
    expect((await t.api('alice', 'PUT', `/authz/roles/${role.body.id}?org=acme`, { teamIDs: [qa] })).status).toBe(200);
    expect((await team(qa))?.role_ids).toEqual([role.body.id]);
    expect((await t.api('alice', 'DELETE', `/authz/roles/${role.body.id}?org=acme`)).status).toBe(204);
    expect((await team(qa))?.role_ids).toBeUndefined();

    // Each team carries its organization: an edit of the organization shows there too.
    expect((await t.api('alice', 'PATCH', '/orgs/acme', { description: 'teams see this' })).status).toBe(200);
    expect((await team(qa))?.organization.description).toBe('teams see this');

    expect((await t.api('alice', 'DELETE', `/teams/${qa}`)).status).toBe(204);
    expect(await team(qa)).toBeUndefined();
  });

  it('shows a custom role’s rename, its teams and its deletion on the next request (the gateway’s roles)', async () => {
    const team = await t.api('alice', 'POST', '/orgs/acme/teams', { name: 'responders', type: 'general' });
    expect(team.status).toBe(201);
    const ops = team.body.id as number;
    const made = await t.api('alice', 'POST', '/authz/roles?org=acme', {
      name: 'operators',
      permissions: [{ namespace: 'org', action: 'edit' }],
    });
    expect(made.status).toBe(201);
    const id = made.body.id as number;
    const role = () => t.api('alice', 'GET', `/authz/roles/${id}?org=acme`);
    const principals = async () =>
      ((await t.api('alice', 'GET', `/authz/roles/${id}/principals?org=acme`)).body as { type: string; id: number }[]).filter(
        (x) => x.type === 'team',
      );
    // Read twice: the second answer is the role the gateway kept.
    expect((await role()).body.name).toBe('operators');
    expect((await role()).body.name).toBe('operators');
    expect(await principals()).toEqual([]);
    // A rename and a description change no tuple; the next read still shows them.
    expect((await t.api('alice', 'PUT', `/authz/roles/${id}?org=acme`, { name: 'on-call', description: 'pager' })).status).toBe(200);
    expect((await role()).body).toMatchObject({ name: 'on-call', description: 'pager' });
    expect((await t.api('alice', 'PUT', `/authz/roles/${id}?org=acme`, { teamIDs: [ops] })).status).toBe(200);
    expect((await role()).body.team_ids).toEqual([ops]);
    expect((await principals()).map((x) => x.id)).toEqual([ops]);
    expect((await t.api('alice', 'DELETE', `/authz/roles/${id}?org=acme`)).status).toBe(204);
    expect((await role()).status).toBe(404);
    expect((await t.api('alice', 'GET', `/authz/roles/${id}/principals?org=acme`)).status).toBe(404);
  });

  it('shows a team’s and a role’s new names and a new holder in who has access on the next request (the gateway’s answers and names)', async () => {
    await t.signUp('carol');
    const acme = (await t.api('alice', 'GET', '/orgs/acme')).body.id as number;
    const makers = (await t.api('alice', 'POST', '/orgs/acme/teams', { name: 'makers', type: 'general' })).body.id as number;
    expect((await t.api('alice', 'PUT', `/teams/${makers}/members/bob`)).status).toBe(204);
    const role = await t.api('alice', 'POST', '/authz/roles?org=acme', {
      name: 'writers',
      permissions: [{ namespace: 'org', action: 'edit' }],
      teamIDs: [makers],
    });
    expect(role.status).toBe(201);
    /** How each user holds edit:org through a custom role, as who has access shows it. */
    const viaRole = async () => {
      const res = await t.api('alice', 'GET', `/authz/objects/organization/${acme}/access?org=acme`);
      expect(res.status).toBe(200);
      const edit = res.body.permissions.find((p: { permission: string }) => p.permission === 'edit:org');
      return Object.fromEntries(
        edit.users.map((u: { login: string; paths: { kind: string }[] }) => [u.login, u.paths.find((x) => x.kind === 'role')]),
      );
    };
    // Read twice: the second answer is the one the gateway kept.
    expect((await viaRole()).bob).toMatchObject({ team_name: 'makers', role_name: 'writers' });
    expect((await viaRole()).bob).toMatchObject({ team_name: 'makers', role_name: 'writers' });
    expect((await t.api('alice', 'PATCH', `/teams/${makers}`, { name: 'builders' })).status).toBe(200);
    expect((await viaRole()).bob).toMatchObject({ team_name: 'builders', role_name: 'writers' });
    expect((await t.api('alice', 'PUT', `/authz/roles/${role.body.id}?org=acme`, { name: 'authors' })).status).toBe(200);
    expect((await viaRole()).bob).toMatchObject({ team_name: 'builders', role_name: 'authors' });
    expect('carol' in (await viaRole())).toBe(false);
    expect((await t.api('alice', 'PUT', `/teams/${makers}/members/carol`)).status).toBe(204);
    expect((await viaRole()).carol).toMatchObject({ kind: 'role', team_name: 'builders', role_name: 'authors' });
  });

  it("refuses a deleted organization's sync token, and gives a claimed organization to its claimer, on the next request", async () => {
    // The sync token signs in as the organization's system admin, an account orgs-teams removes with the organization.
    const made = await t.api('alice', 'POST', '/orgs', { username: 'doomed', managerManagementClusterEndPoint: 'https://hub.example.com' });
    expect(made.status).toBe(201);
    expect((await t.api('alice', 'POST', '/orgs/doomed/manager/sync-token', {})).status).toBe(200);
    const secret = (await t.api('alice', 'GET', '/orgs/doomed/manager/sync-token')).body.secretAccessKey as string;
    const asSystemAdmin = () => t.api(undefined, 'GET', '/user', undefined, { authorization: `token ${secret}` });
    expect((await asSystemAdmin()).status).toBe(200);
    expect((await asSystemAdmin()).status).toBe(200);
    expect((await t.api('alice', 'DELETE', '/orgs/doomed')).status).toBe(204);
    expect((await asSystemAdmin()).status).toBe(401);

    // A claim moves the ownership tuples in authz: the gateway's answers about both owners change at once.
    expect((await t.api('root', 'POST', '/orgs', { username: 'standalone' })).status).toBe(201);
    const standalone = (await t.api('root', 'GET', '/orgs/standalone')).body;
    const claims = createClient(orgClaimsV1.OrgClaimsServiceService, t.grpcAddress('orgs-teams'), { name: 'orgs-teams' });
    const { claimId } = await claims.createClaim({ orgId: standalone.id, backoffSeconds: 0, ifAbsent: false });
    claims.close();
    expect((await t.api('bob', 'GET', '/orgs/standalone/is-owner')).status).toBe(403);
    expect((await t.api('root', 'GET', '/orgs/standalone/is-owner')).status).toBe(200);
    expect((await t.api('bob', 'PATCH', `/orgs/claim/${claimId}`)).body).toMatchObject({ id: standalone.id, username: 'standalone' });
    expect((await t.api('bob', 'GET', '/orgs/standalone/is-owner')).status).toBe(200);
    expect((await t.api('bob', 'PATCH', '/orgs/standalone', { description: 'mine now' })).status).toBe(200);
    expect((await t.api('root', 'GET', '/orgs/standalone/is-owner')).status).toBe(403);
  });

  it("refuses a member removed from the organization at the metrics hook on the next request, and answers a registration's new client organization at once", async () => {
    expect((await t.api('alice', 'POST', '/orgs', { username: 'metered' })).status).toBe(201);
    const owner = (await t.api('alice', 'GET', '/orgs/metered')).body.id;
    const prod = (await t.api('alice', 'POST', '/orgs/metered/clusters', { name: 'prod' })).body.cluster.uid;
    const devs = (await t.api('alice', 'POST', '/orgs/metered/teams', { name: 'devs', type: 'general' })).body.id;
    expect((await t.api('alice', 'PUT', `/teams/${devs}/members/bob`)).status).toBe(204);
    const hook = (who: string) => t.api(who, 'GET', `/metricsproxy/auth/${owner}.${prod}/api/v1/query`);
    expect((await hook('bob')).body).toEqual({ owner: 'metered', clusterName: 'prod', tenantID: `${owner}.${prod}` });
    // A site admin is no member: authz's decision, not the hook's.
    expect((await hook('root')).status).toBe(401);

    // Each registration's client organization, and its removal, on the next request though the gateway keeps them.
    const register = (clientOrgID: string) =>
      t.api('alice', 'POST', '/metricsproxy/register?org=metered', { clusterUID: prod, backend: { url: 'http://prom:9090' }, clientOrgID });
    expect((await register('client-a')).status).toBe(200);
    expect((await hook('bob')).body.clientOrg).toBe('client-a');
    expect((await hook('bob')).headers.get('x-metrics-client-org')).toBe('client-a');
    expect((await register('client-b')).status).toBe(200);
    expect((await hook('bob')).body.clientOrg).toBe('client-b');
    expect((await t.api('alice', 'POST', '/metricsproxy/unregister?org=metered', { clusterUID: prod })).status).toBe(200);
    expect((await hook('bob')).body.clientOrg).toBeUndefined();

    expect((await t.api('alice', 'DELETE', `/teams/${devs}/members/bob`)).status).toBe(204);
    expect((await hook('bob')).status).toBe(401);
    expect((await t.api('alice', 'PUT', `/teams/${devs}/members/bob`)).status).toBe(204);
    expect((await hook('bob')).status).toBe(200);
  });
});
