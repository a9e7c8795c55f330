import { NotFoundError, InputError } from '@platform/errors';
import { openEngineDatabase } from './engine/test/engine-db';
import { WhoHasAccess } from './who-has-access';

const t = (user: string, relation: string, object: string) => ({ user, relation, object });
const NOW = { current_time: '2026-11-25T00:00:00Z' };

let database: Awaited<ReturnType<typeof openEngineDatabase>>;
beforeAll(async () => {
  database = await openEngineDatabase();
});
afterAll(async () => {
  await database?.close();
});

/** An organization with a site admin, an owner, an Owners team, a team carrying a custom role, a member and a contract. */
async function organization() {
  const made = await database.engine();
  await made.engine.write(
    [
      t('site:platform', 'site', 'organization:1'),
      t('user:1', 'admin', 'site:platform'),
      t('user:2', 'owner', 'organization:1'),
      t('organization:1', 'organization', 'team:10'),
      t('team:10#member', 'owner', 'organization:1'),
      t('user:3', 'member', 'team:10'),
      t('organization:1', 'organization', 'role:5'),
      t('role:5#assignee', 'edit', 'organization:1'),
      t('role:5#assignee', 'view_contracts_mgmt', 'organization:1'),
      t('team:11#member', 'assignee', 'role:5'),
      t('user:4', 'member', 'team:11'),
      t('user:6', 'member', 'organization:1'),
      t('user:8', 'member', 'organization:1'),
      t('organization:1', 'owner', 'contract:c1'),
      t('user:7', 'owner', 'contract:c2'),
    ],
    [],
  );
  return made;
}

describe('who has access', () => {
  it("lists each organization permission's holders with the owner, team, role and site-admin paths", async () => {
    const { engine, dispose } = await organization();
    try {
      const probes = jest.spyOn(engine, 'batchCheck');
      const answer = await new WhoHasAccess(engine, engine.model).of('organization:1', NOW);
      // One probe per relation and grant: the owner, the Owners team, the role through its team, the site admins, and
      // membership once for both plain members.
      expect(probes.mock.calls[0][0]).toHaveLength(answer.length * 5);
      const edit = answer.find((p) => p.permission === 'edit:org')!;
      expect(edit.relation).toBe('edit');
      expect(edit.description).toBe('Edit the organization');
      expect(edit.users).toEqual([
        { userId: 1, paths: [{ kind: 'site_admin' }] },
        { userId: 2, paths: [{ kind: 'owner' }] },
        { userId: 3, paths: [{ kind: 'owner', teamId: 10 }] },
        { userId: 4, paths: [{ kind: 'role', roleId: 5, teamId: 11 }] },
      ]);
      // A plain member reads teams through membership, not edit.
      const viewTeam = answer.find((p) => p.relation === 'view_team')!;
      // Named as the catalog's permission a custom role grants as that relation, not as the relation.
      expect([viewTeam.permission, viewTeam.description]).toEqual(['view:team', 'View teams']);
      expect(viewTeam.users.find((u) => u.userId === 6)).toEqual({ userId: 6, paths: [{ kind: 'relation', relation: 'member' }] });
      // A team carrying a role is not thereby a member: its member holds only what the role grants.
      expect(viewTeam.users.map((u) => u.userId)).toEqual([1, 2, 3, 6, 8]);
      expect(viewTeam.users.find((u) => u.userId === 8)!.paths).toEqual([{ kind: 'relation', relation: 'member' }]);
    } finally {
      await dispose();
    }
  });

  it("answers a contract through its owning organization's grants, and a user-owned one through its owner", async () => {
    const { engine, dispose } = await organization();
    try {
      const answer = await new WhoHasAccess(engine, engine.model).of('contract:c1', NOW);
      const view = answer.find((p) => p.relation === 'view')!;
      expect(view.users.map((u) => u.userId)).toEqual([1, 2, 3, 4, 6, 8]);
      expect(view.users.find((u) => u.userId === 4)!.paths).toEqual([{ kind: 'role', roleId: 5, teamId: 11 }]);
      const own = await new WhoHasAccess(engine, engine.model).of('contract:c2', NOW);
      expect(own.find((p) => p.relation === 'view')!.users).toEqual([{ userId: 7, paths: [{ kind: 'owner', relation: 'owner' }] }]);
    } finally {
      await dispose();
    }
  });

  it('answers a contract authz keeps no owner of through the owner it is handed, for this answer only', async () => {
    const { engine, dispose } = await organization();
    try {
      // contract:c3 has no tuple: contracts-licensing says whose it is, with every question.
      const answer = await new WhoHasAccess(engine, engine.model).of('contract:c3', NOW, 'organization:1');
      const holders = (relation: string) =>
        Object.fromEntries(answer.find((p) => p.relation === relation)!.users.map((u) => [u.userId, u.paths.map((x) => x.kind)]));
      // Every member of the organization sees it; its owners, directly or through the Owners team, issue its licenses.
      expect(Object.keys(holders('view')).map(Number)).toEqual([1, 2, 3, 4, 6, 8]);
      expect(holders('issue_license')).toEqual({ 1: ['site_admin'], 2: ['owner'], 3: ['owner'] });
      await expect(new WhoHasAccess(engine, engine.model).of('contract:c3', NOW)).rejects.toBeInstanceOf(NotFoundError);
      await expect(new WhoHasAccess(engine, engine.model).of('organization:1', NOW, 'organization:2')).rejects.toBeInstanceOf(InputError);
    } finally {
      await dispose();
    }
  });

  it('refuses other kinds of object and an object nothing is known of', async () => {
    const { engine, dispose } = await organization();
    try {
      await expect(new WhoHasAccess(engine, engine.model).of('team:10', NOW)).rejects.toBeInstanceOf(InputError);
      await expect(new WhoHasAccess(engine, engine.model).of('contract:nope', NOW)).rejects.toBeInstanceOf(NotFoundError);
      await expect(new WhoHasAccess(engine, engine.model).of('contract', NOW)).rejects.toThrow('invalid object');
    } finally {
      await dispose();
    }
  });
});
