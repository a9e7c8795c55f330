import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Route } from '../src/route';
import { routeSources, RouteSourceError } from '../src/route-sources';
import { ROUTES } from '../src/sections';

// docs/routes.md names the file declaring each row and the gRPC methods its handler may call, read from the sources
// (route-sources.ts). The reading must find every row's call, follow the handlers through their helpers and factories,
// and refuse what it cannot follow rather than list too little.

const ROOT = path.resolve(__dirname, '../../..');

describe('the sources of the route rows', () => {
  const sources = routeSources(ROUTES, ROOT);
  const of = (method: string, p: string) => {
    const row = ROUTES.find((r) => r.method === method && r.path === p);
    if (!row) throw new Error(`no row ${method} ${p}`);
    return sources.get(row)!;
  };

  it('finds the file declaring every row', () => {
    expect(sources.size).toBe(ROUTES.length);
    for (const r of ROUTES) {
      const { file } = sources.get(r)!;
      expect(file).toMatch(/^apps\/gateway\/src\/sections\/.+\.ts$/);
      expect(fs.existsSync(path.join(ROOT, file))).toBe(true);
    }
    expect(of('get', '/orgs').file).toBe('apps/gateway/src/sections/organizations/routes.ts');
    expect(of('post', '/orgs/:orgname/teams').file).toBe('apps/gateway/src/sections/teams/routes.ts');
  });

  it('follows handlers through helpers, aliases, returned clients and tables of functions', () => {
    // createOrgFor(backends, ...): a helper given the door.
    expect(of('post', '/orgs').calls).toEqual(['OrganizationsService.CreateOrg']);
    // ctx.kept: a kept read.
    expect(of('get', '/orgs/:orgname/members').calls).toEqual(['OrganizationsService.ListMembers (kept)']);
    // OWNERS[prefix](backends, ...): every function of the table.
    expect(of('get', '/objects/*key').calls).toEqual(['AvatarsService.GetAvatarObject']);
    // client(ctx).listWebhookEndpoints(...) through a factory's argument `ownerId: (ctx) => ctx.target.id`.
    expect(of('get', '/orgs/:orgname/notifications/webhooks').calls).toEqual(['NotificationsService.ListWebhookEndpoints']);
    // A handler answering from what the edge resolved.
    expect(of('get', '/user').calls).toEqual([]);
  });

  it("lets a factory's arguments decide a branch, and no more", () => {
    // domainChange('post' | 'patch', ...): `method === 'post' ? add : remove`.
    expect(of('post', '/allowed-domains').calls).toEqual(['SiteSettingsService.AddAllowedDomain']);
    expect(of('patch', '/allowed-domains').calls).toEqual(['SiteSettingsService.RemoveAllowedDomain']);
    // MEMBER_ACTIONS.map(memberAction), TEAM_ACTIONS.map(teamAction), (['bind', 'unbind'] as const).map(...).
    expect(of('post', '/orgs/:orgname/members/action/public').calls).toEqual(['OrganizationsService.SetMemberVisibility']);
    expect(of('post', '/orgs/:orgname/members/action/leave').calls).toEqual(['OrganizationsService.RemoveMember']);
    expect(of('post', '/orgs/:orgname/teams/:teamid/action/add').calls).toEqual(['OrganizationsService.AddTeamMember']);
    expect(of('post', '/clusters/:owner/:cluster/bound-namespaces/unbind').calls).toEqual(['ClusterSetsService.UnbindNamespace']);
    // A branch on the request counts both ways.
    expect(of('post', '/user/verification-mail').calls).toEqual(['OrgsTeamsService.SendVerificationMail']);
  });

  describe('on sources it cannot follow', () => {
    let root: string;
    beforeAll(() => {
      // A workspace of one section file, with the real backends, client libraries and generated definitions.
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'route-sources-'));
      fs.mkdirSync(path.join(root, 'apps/gateway/src/sections'), { recursive: true });
      fs.copyFileSync(path.join(ROOT, 'tsconfig.base.json'), path.join(root, 'tsconfig.base.json'));
      fs.copyFileSync(path.join(ROOT, 'apps/gateway/src/backends.ts'), path.join(root, 'apps/gateway/src/backends.ts'));
      fs.symlinkSync(path.join(ROOT, 'libs'), path.join(root, 'libs'));
    });
    afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

    const row = (p: string) =>
      ({ method: 'get', path: p, summary: p, tag: 'Users', backend: 'orgs-teams', auth: 'token', scope: 'read:user' }) as Route;
    const section = (handler: string) =>
      fs.writeFileSync(
        path.join(root, 'apps/gateway/src/sections/x.ts'),
        [
          "import { sectionRoutes } from '../route';",
          "const route = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });",
          'const twice = (b: any) => [b.orgsTeams.identity.getUser({}), b.orgsTeams.identity.getUser({})];',
          'export const rows = [',
          `  route({ method: 'get', scope: 'read:user', path: '/x', summary: '/x', auth: 'token', response: { status: 200 }, ${handler} }),`,
          '];',
        ].join('\n'),
      );

    it('reads what it can follow', () => {
      section(
        'async handle(_i, { kept }) { const { identity: i } = kept.orgsTeams; return { body: [await i.getUser({}), twice(kept)] }; }',
      );
      const r = row('/x');
      expect(routeSources([r], root).get(r)).toEqual({
        file: 'apps/gateway/src/sections/x.ts',
        calls: ['OrgsTeamsService.GetUser (kept)'],
      });
    });

    it.each([
      [
        'a backend handed to a function it does not know',
        'async handle(_i, ctx) { return { body: JSON.stringify(ctx.backends) }; }',
        /x\.ts:5: a backend passed to JSON\.stringify/,
      ],
      [
        'a backend reached by a computed name',
        "async handle(_i, { backends }) { const k = String('orgsTeams'); return { body: backends[k] }; }",
        /a backend indexed/,
      ],
      [
        'a backend assigned to a variable',
        'async handle(_i, { backends }) { let b; b = backends.orgsTeams; return { body: b }; }',
        /assigned/,
      ],
      [
        'a method the service lacks',
        'async handle(_i, { backends }) { return { body: await backends.orgsTeams.identity.getNothing({}) }; }',
        /no such method/,
      ],
    ])('refuses %s', (_what, handler, message) => {
      section(handler);
      expect(() => routeSources([row('/x')], root)).toThrow(RouteSourceError);
      expect(() => routeSources([row('/x')], root)).toThrow(message);
    });

    it('refuses a row no route call makes', () => {
      section('async handle() { return {}; }');
      expect(() => routeSources([row('/y')], root)).toThrow(/GET \/y: 0 route calls may have made it/);
    });
  });
});
