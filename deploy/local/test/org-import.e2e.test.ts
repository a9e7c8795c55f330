import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bootTestPlatform, type TestPlatform } from './harness';

// The import of organizations in bulk over HTTP (POST /admin/orgs/import, docs/import.md): who may call it, what a bad
// body answers, and that an imported organization is read and authorized by the ordinary routes exactly as one made
// call by call, custom role included.

describe('POST /admin/orgs/import', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);

  const acme = {
    name: 'acme',
    full_name: 'Acme Inc.',
    owners: ['olivia'],
    teams: [
      { name: 'devs', members: ['mia'], roles: ['editors'] },
      { name: 'ops', members: ['nora'], permission: 'write' },
    ],
    roles: [{ name: 'editors', description: 'edit the organization', permissions: [{ namespace: 'org', action: 'edit' }] }],
  };

  beforeAll(async () => {
    harness = await bootTestPlatform();
    for (const name of ['olivia', 'mia', 'nora']) await harness.signUp(name);
  }, 120_000);
  afterAll(() => harness?.stop());

  it('answers 401 without a token and 403 to a user who is not a site admin, writing nothing', async () => {
    expect((await api(undefined, 'POST', '/admin/orgs/import', { organizations: [acme] })).status).toBe(401);
    expect((await api('olivia', 'POST', '/admin/orgs/import', { organizations: [acme] })).status).toBe(403);
    expect((await api('root', 'GET', '/orgs/acme')).status).toBe(404);
  });

  it.each([
    ['no organizations', {}],
    ['an empty batch', { organizations: [] }],
    ['a name that is not a string', { organizations: [{ name: 5 }] }],
    ['members that are not a list', { organizations: [{ name: 'x', teams: [{ name: 't', members: 'mia' }] }] }],
    ['an unknown visibility', { organizations: [{ name: 'x', visibility: 'secret' }] }],
  ])('answers 422 for %s', async (_what, body) => {
    const res = await api('root', 'POST', '/admin/orgs/import', body);
    expect(res.status).toBe(422);
    expect(res.body.message).toEqual(expect.any(String));
  });

  it('answers 422 for a body that is not JSON', async () => {
    const res = await harness.send('root', 'POST', '/admin/orgs/import', '{"organizations": [', { 'content-type': 'application/json' });
    expect(res.status).toBe(422);
  });

  it('imports an organization the ordinary routes read and authorize as one made call by call', async () => {
    const res = await api('root', 'POST', '/admin/orgs/import', { organizations: [acme] });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      {
        name: 'acme',
        outcome: 'created',
        id: expect.any(Number),
        created: { orgs: 1, teams: 3, memberships: 3, roles: 1, role_assignments: 1 },
        existing: { orgs: 0, teams: 0, memberships: 0, roles: 0, role_assignments: 0 },
        errors: [],
      },
    ]);

    expect((await api('olivia', 'GET', '/orgs/acme')).body).toMatchObject({ username: 'acme', full_name: 'Acme Inc.' });
    const teams = await api('mia', 'GET', '/orgs/acme/teams');
    expect(teams.status).toBe(200);
    expect(teams.body.map((t: { name: string; permission: string }) => [t.name, t.permission])).toEqual([
      ['Owners', 'owner'],
      ['devs', 'read'],
      ['ops', 'write'],
    ]);
    const devs = teams.body.find((t: { name: string }) => t.name === 'devs');
    const members = await api('olivia', 'GET', `/teams/${devs.id}/members`);
    expect(members.body.map((u: { login: string }) => u.login)).toEqual(['mia']);
    const roles = await api('olivia', 'GET', '/authz/roles?org=acme');
    expect(roles.body).toEqual([expect.objectContaining({ name: 'editors', team_ids: [devs.id] })]);

    // The role reaches devs' members, and only them; the owner team owns the organization.
    expect((await api('mia', 'PATCH', '/orgs/acme', { description: 'edited by a role' })).status).toBe(200);
    expect((await api('nora', 'PATCH', '/orgs/acme', { description: 'not allowed' })).status).toBe(403);
    expect((await api('olivia', 'PATCH', '/orgs/acme', { location: 'Earth' })).status).toBe(200);
    expect((await api('olivia', 'GET', '/orgs/acme')).body).toMatchObject({ description: 'edited by a role', location: 'Earth' });
  });

  it('changes nothing when the same batch comes again, and refuses an organization naming an unknown user', async () => {
    const res = await api('root', 'POST', '/admin/orgs/import', {
      organizations: [acme, { name: 'globex', teams: [{ name: 'devs', members: ['mia', 'nobody'] }] }],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { outcome: string }) => r.outcome)).toEqual(['unchanged', 'refused']);
    expect(res.body.results[0].existing).toEqual({ orgs: 1, teams: 3, memberships: 3, roles: 1, role_assignments: 1 });
    expect(res.body.results[1].errors).toEqual(['no user named "nobody": members must be existing users (create them first)']);
    expect((await api('root', 'GET', '/orgs/globex')).status).toBe(404);
  });

  it('cli import: a run cut short resumes from its resume point, and the same file again changes nothing', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'import-')), 'organizations.csv');
    const csv = 'organization,team,username\nwayne,Owners,olivia\nwayne,a,mia\nstark,b,nora\numbrella,Owners,olivia\n';
    fs.writeFileSync(file, csv);
    // `npm run cli -- import`, as an operator runs it.
    const cli = (...args: string[]) =>
      new Promise<{ code: number; out: string; err: string }>((resolve, reject) => {
        const argv = ['import', file, '--url', harness.platform.url, '--batch-size', '2', ...args];
        const child = spawn(process.execPath, [path.join(__dirname, '../../cli/cli.mjs'), ...argv], {
          env: { PATH: process.env.PATH ?? '', PLATFORM_TOKEN: harness.tokens.root },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (err += d));
        child.once('error', reject);
        child.once('close', (code) => resolve({ code: code ?? -1, out, err }));
      });
    // An earlier run was killed after the platform confirmed its first batch (wayne): it left its resume point.
    const first = await api('root', 'POST', '/admin/orgs/import', {
      organizations: [{ name: 'wayne', owners: ['olivia'], teams: [{ name: 'a', members: ['mia'] }] }],
    });
    expect(first.body.results[0].outcome).toBe('created');
    const url = new URL('api/v1/admin/orgs/import', harness.platform.url).toString();
    const sha256 = createHash('sha256').update(csv).digest('hex');
    fs.writeFileSync(`${file}.import-state`, JSON.stringify({ sha256, url, batchSize: 2, done: 1 }));

    const resumed = await cli();
    expect(resumed.err).toContain('resuming: 1 of 3 batches were imported by an earlier run');
    expect(resumed.out).toContain('3 organizations in 3 batches: 2 created, 0 completed, 0 unchanged, 0 refused');
    expect(resumed.code).toBe(0);
    expect(fs.existsSync(`${file}.import-state`)).toBe(false);
    expect((await api('nora', 'GET', '/orgs/stark/teams')).status).toBe(200);

    const again = await cli();
    expect(again.out).toContain('3 organizations in 3 batches: 0 created, 0 completed, 3 unchanged, 0 refused');
    expect(again.code).toBe(0);

    fs.writeFileSync(file, 'organization,team,username\ninitech,a,nobody\n');
    const refused = await cli();
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('initech: refused: no user named "nobody"');
  });
});
