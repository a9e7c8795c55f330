import { DomainError } from '@platform/errors';
import { authzV1 } from '@platform/proto';
import { Authorization } from './authorization';
import { openEngineDatabase } from './engine/test/engine-db';
import { authzService, LIST_MAX_RESULTS } from './service';

// The questions of AuthzService as other teams ask them (docs/grpc.md): relations named as the console and the
// permission catalog name them, and OpenFGA's Expand, over the embedded engine and the platform's model.

const t = (user: string, relation: string, object: string) => ({ user, relation, object });

let database: Awaited<ReturnType<typeof openEngineDatabase>>;
let authorization: Authorization;
let dispose: () => Promise<void>;
let made: Awaited<ReturnType<Awaited<ReturnType<typeof openEngineDatabase>>['engine']>>['engine'];

// Organization 1 (site admin 1, owner 2, member 3 of team 10, role 5 carrying view_contracts:contract_mgmt on team 11
// with member 4); organization 2 with owner 7; cluster c1 owned by organization 1 and user 8.
beforeAll(async () => {
  database = await openEngineDatabase();
  const opened = await database.engine();
  dispose = opened.dispose;
  made = opened.engine;
  authorization = new Authorization(made, made.model);
  await made.write(
    [
      t('user:1', 'admin', 'site:platform'),
      t('site:platform', 'site', 'organization:1'),
      t('site:platform', 'site', 'organization:2'),
      t('user:2', 'owner', 'organization:1'),
      t('organization:1', 'organization', 'team:10'),
      t('team:10#member', 'member', 'organization:1'),
      t('user:3', 'member', 'team:10'),
      t('organization:1', 'organization', 'team:11'),
      t('team:11#member', 'member', 'organization:1'),
      t('user:4', 'member', 'team:11'),
      t('organization:1', 'organization', 'role:5'),
      t('role:5#assignee', 'view_contracts_mgmt', 'organization:1'),
      t('team:11#member', 'assignee', 'role:5'),
      t('user:7', 'owner', 'organization:2'),
      t('organization:1', 'owner', 'cluster:c1'),
      t('user:8', 'owner', 'cluster:c1'),
    ],
    [],
  );
});
afterAll(async () => {
  await dispose?.();
  await database?.close();
});

const check = (user: string, relation: string, object: string) => authorization.check({ user, relation, object });
const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return { kind: (err as DomainError).kind, message: (err as DomainError).message };
};

describe('relation names: the model’s, and the permission names the catalog shows', () => {
  it('answers the catalog’s action, its full name and the model’s relation alike', async () => {
    for (const relation of ['view_contracts', 'view_contracts:contract_mgmt', 'view_contracts_mgmt']) {
      expect({ relation, role: await check('user:4', relation, 'organization:1') }).toEqual({ relation, role: true });
      expect({ relation, member: await check('user:3', relation, 'organization:1') }).toEqual({ relation, member: false });
      expect({ relation, owner: await check('user:2', relation, 'organization:1') }).toEqual({ relation, owner: true });
    }
    // On the site, view_contracts is the model's own relation (site admins), and so is its permission name.
    expect(await check('user:1', 'view_contracts', 'site:platform')).toBe(true);
    expect(await check('user:1', 'view_contracts:site_admin', 'site:platform')).toBe(true);
    expect(await check('user:4', 'view_contracts', 'site:platform')).toBe(false);
    expect(await check('user:3', 'list:team-members', 'team:10')).toBe(true);
    expect(await check('user:8', 'issue-license', 'cluster:c1')).toBe(true);
  });

  it('reads names in batches, relation lists, list-objects, list-users and expand too', async () => {
    expect(
      await authorization.batchCheck([
        { user: 'user:4', relation: 'view_contracts', object: 'organization:1' },
        { user: 'user:4', relation: 'edit:org', object: 'organization:1' },
      ]),
    ).toEqual([true, false]);
    expect(await authorization.listRelations('user:4', 'organization:1', ['view_contracts', 'member', 'edit:org'])).toEqual([
      'view_contracts',
      'member',
    ]);
    expect(await authorization.listObjects('user:4', 'view_contracts', 'organization')).toEqual(['organization:1']);
    expect(
      await authorization.listUsers({ object: 'organization:1', relation: 'view_contracts', userFilters: [{ type: 'user' }] }),
    ).toEqual(['user:1', 'user:2', 'user:4']);
    const tree = await authorization.expand('organization:1', 'view_contracts');
    expect(tree.root?.name).toBe('organization:1#view_contracts_mgmt');
  });

  it('refuses an ambiguous action naming the permissions to choose from, and a permission of another type', async () => {
    expect(await refusal(check('user:2', 'list', 'organization:1'))).toEqual({
      kind: 'input',
      message: expect.stringMatching(/ambiguous.*'list:team'.*'list:access-token'.*'list:bus-token'/),
    });
    expect(await refusal(check('user:2', 'view:team', 'organization:1'))).toEqual({
      kind: 'input',
      message: "permission 'view:team' is checked on team objects, not on organization",
    });
    expect((await refusal(check('user:2', 'no_such_permission', 'organization:1'))).kind).toBe('input');
  });
});

describe('Expand', () => {
  it('answers the userset tree one level deep, as OpenFGA: users of the tuples, computed relations, parents', async () => {
    expect(await authorization.expand('organization:1', 'member')).toEqual({
      root: {
        name: 'organization:1#member',
        value: {
          $case: 'union',
          value: {
            nodes: [
              {
                name: 'organization:1#member',
                value: { $case: 'leaf', value: { value: { $case: 'users', value: { users: ['team:10#member', 'team:11#member'] } } } },
              },
              {
                name: 'organization:1#member',
                value: { $case: 'leaf', value: { value: { $case: 'computed', value: { userset: 'organization:1#owner' } } } },
              },
            ],
          },
        },
      },
    });
    const view = await authorization.expand('cluster:c1', 'view');
    const nodes = view.root?.value?.$case === 'union' ? view.root.value.value.nodes : [];
    expect(nodes.map((n) => (n.value?.$case === 'leaf' ? n.value.value.value : n.value?.$case))).toEqual([
      { $case: 'users', value: { users: [] } },
      { $case: 'computed', value: { userset: 'cluster:c1#manage' } },
      // `member from owner`: the owners that are organizations (the user owner defines no member relation).
      { $case: 'tupleToUserset', value: { tupleset: 'cluster:c1#owner', computed: [{ userset: 'organization:1#member' }] } },
    ]);
  });

  it('counts contextual tuples, and refuses an object or relation the model does not have', async () => {
    const tree = await authorization.expand('team:10', 'member', [t('user:9', 'member', 'team:10')]);
    expect(tree.root?.value).toEqual({ $case: 'leaf', value: { value: { $case: 'users', value: { users: ['user:3', 'user:9'] } } } });
    expect((await refusal(authorization.expand('team:10', 'owner'))).kind).toBe('input');
    expect((await refusal(authorization.expand('nothing:1', 'member'))).kind).toBe('input');
    expect((await refusal(authorization.expand('team:10#member', 'member'))).kind).toBe('input');
    expect((await refusal(authorization.expand('team:10', 'member', [t('team:11#member', 'member', 'team:10')]))).kind).toBe('input');
  });
});

describe('lists through the service', () => {
  it('answers at most OpenFGA’s default maximum of objects or users, whatever the store holds', async () => {
    // user:9 a member of 1,001 organizations; the first of them with 1,001 members in all (user:9 among them).
    const orgs = Array.from({ length: LIST_MAX_RESULTS + 1 }, (_, i) => `organization:${1000 + i}`);
    const members = Array.from({ length: LIST_MAX_RESULTS + 1 }, (_, i) => `user:${1000 + i}`);
    await made.write(
      [...orgs.map((o) => t('user:9', 'member', o)), ...members.filter((u) => u !== 'user:1000').map((u) => t(u, 'member', 'organization:1000'))],
      [],
    );
    const { handlers } = authzService(authorization, authzV1.DescribeStoreResponse.fromPartial({}));
    const listObjects = handlers.listObjects as (r: unknown, ctx: never) => Promise<{ objects: string[] }>;
    const listUsers = handlers.listUsers as (r: unknown, ctx: never) => Promise<{ users: string[] }>;
    const objects = (await listObjects({ user: 'user:9', relation: 'member', type: 'organization', contextualTuples: [], contextJson: '' }, {} as never))
      .objects;
    expect(objects).toHaveLength(LIST_MAX_RESULTS);
    expect(new Set(objects).size).toBe(LIST_MAX_RESULTS);
    expect(objects.every((o) => orgs.includes(o))).toBe(true);
    // Below the maximum, every one.
    expect(await authorization.listObjects('user:9', 'member', 'organization')).toHaveLength(LIST_MAX_RESULTS + 1);
    const users = (
      await listUsers(
        { object: 'organization:1000', relation: 'member', userFilters: [{ type: 'user', relation: '' }], contextualTuples: [], contextJson: '' },
        {} as never,
      )
    ).users;
    expect(users).toHaveLength(LIST_MAX_RESULTS);
    expect(users.every((u) => u === 'user:9' || members.includes(u))).toBe(true);
  }, 120_000);
});
