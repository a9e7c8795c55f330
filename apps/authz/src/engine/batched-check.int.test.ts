import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { openDatabase } from '@platform/db';
import { ENGINE_MIGRATIONS, openEngineDatabase } from './test/engine-db';
import { ResolutionTooComplexError } from './errors';
import { EmbeddedEngine } from './embedded-engine';
import { TypeSystem } from './model';
import { TupleStore } from './tuple-store';

// The batched walk over Postgres (these engines read the table; memory-tuples.int.test.ts covers memory): relations
// that are acyclic unions (create, owner, assignee, member) are
// resolved a level at a time, one statement per level; viewer (recursive through parent, and through
// group#member) is walked an object at a time and hands its batchable usersets to the batched walk.
const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type team
  relations
    define member: [user, user:*]
type role
  relations
    define assignee: [user, team#member]
type site
  relations
    define admin: [user]
type org
  relations
    define site: [site]
    define parent: [org]
    define owner: [user, team#member]
    define create: [role#assignee] or owner or admin from site
    define viewer: [team#member, group#member] or viewer from parent
`;

const t = (user: string, relation: string, object: string) => ({ user, relation, object });

let database: Awaited<ReturnType<typeof openEngineDatabase>>;
let engine: EmbeddedEngine;
let dispose: () => Promise<void>;

beforeAll(async () => {
  database = await openEngineDatabase();
});
afterAll(async () => {
  await database?.close();
});
beforeEach(async () => {
  ({ engine, dispose } = await database.engine(MODEL, { memory: false }));
});
afterEach(async () => {
  await dispose();
});

const can = (user: string, relation: string, object: string) => engine.check({ user, relation, object });

/** The answer and how many statements (round trips to Postgres) the check sent. */
async function counted(user: string, relation: string, object: string) {
  const reads = jest.spyOn(TupleStore.prototype, 'readUsers');
  try {
    return { allowed: await can(user, relation, object), statements: reads.mock.calls.length };
  } finally {
    reads.mockRestore();
  }
}

/** Role `role:r` of org:acme, assigned to teams team:0..team:{n-1}; team:i has member user:m{i}. */
async function roleWithTeams(n: number) {
  const tuples = [t('role:r#assignee', 'create', 'org:acme')];
  for (let i = 0; i < n; i++) tuples.push(t(`team:${i}#member`, 'assignee', 'role:r'), t(`user:m${i}`, 'member', `team:${i}`));
  await engine.write(tuples, []);
}

describe('batched checks', () => {
  it('finds the user in the last of many teams with one statement per level', async () => {
    await roleWithTeams(30);
    // org:acme#create, #owner, #site; then role:r#assignee; then the 30 teams at once.
    expect(await counted('user:m29', 'create', 'org:acme')).toEqual({ allowed: true, statements: 3 });
    expect(await counted('user:stranger', 'create', 'org:acme')).toEqual({ allowed: false, statements: 3 });
    expect(await can('user:m0', 'create', 'org:acme')).toBe(true);
    expect(await can('user:m29', 'create', 'org:other')).toBe(false);
  });

  it('stops at the first level that holds the user', async () => {
    await roleWithTeams(5);
    await engine.write([t('user:boss', 'owner', 'org:acme'), t('user:r', 'assignee', 'role:r')], []);
    expect(await counted('user:boss', 'create', 'org:acme')).toEqual({ allowed: true, statements: 1 });
    expect(await counted('user:r', 'create', 'org:acme')).toEqual({ allowed: true, statements: 2 });
  });

  it('a team with a wildcard member among many grants everyone, and only users', async () => {
    await roleWithTeams(10);
    await engine.write([t('user:*', 'member', 'team:everyone'), t('team:everyone#member', 'assignee', 'role:r')], []);
    expect(await can('user:anyone', 'create', 'org:acme')).toBe(true);
    expect(await can('user:*', 'create', 'org:acme')).toBe(true);
    expect(await can('team:3#member', 'create', 'org:acme')).toBe(true); // a userset assigned the role
    expect(await can('group:g#member', 'create', 'org:acme')).toBe(false);
    await engine.write([], [t('team:everyone#member', 'assignee', 'role:r')]);
    expect(await can('user:anyone', 'create', 'org:acme')).toBe(false);
    expect(await can('user:m9', 'create', 'org:acme')).toBe(true);
  });

  it('reaches the same answer through owner teams and site admins, each read once', async () => {
    await roleWithTeams(3);
    await engine.write(
      [
        t('team:owners#member', 'owner', 'org:acme'),
        t('user:olivia', 'member', 'team:owners'),
        t('site:platform', 'site', 'org:acme'),
        t('user:root', 'admin', 'site:platform'),
      ],
      [],
    );
    expect(await can('user:olivia', 'create', 'org:acme')).toBe(true);
    expect(await can('user:root', 'create', 'org:acme')).toBe(true);
    expect(await counted('user:nobody', 'create', 'org:acme')).toEqual({ allowed: false, statements: 3 });
  });

  it('mixes contextual tuples with stored ones in a batched level', async () => {
    await roleWithTeams(10);
    // The user joins the last team only for this check.
    const joins = [t('user:guest', 'member', 'team:9')];
    expect(await engine.check({ user: 'user:guest', relation: 'create', object: 'org:acme', contextualTuples: joins })).toBe(true);
    expect(await can('user:guest', 'create', 'org:acme')).toBe(false);
    // A team assigned to the role only for this check, whose membership is stored.
    await engine.write([t('user:temp', 'member', 'team:temp')], []);
    const assigns = [t('team:temp#member', 'assignee', 'role:r')];
    expect(await engine.check({ user: 'user:temp', relation: 'create', object: 'org:acme', contextualTuples: assigns })).toBe(true);
    expect(await can('user:temp', 'create', 'org:acme')).toBe(false);
    // A contextual tuple that repeats a stored one changes nothing.
    const again = [t('team:3#member', 'assignee', 'role:r')];
    expect(await engine.check({ user: 'user:m3', relation: 'create', object: 'org:acme', contextualTuples: again })).toBe(true);
    expect(await engine.check({ user: 'user:m4', relation: 'create', object: 'org:other', contextualTuples: again })).toBe(false);
  });

  it('answers a batch (one shared resolver) in request order', async () => {
    await roleWithTeams(8);
    const users = ['user:m7', 'user:x', 'user:m0', 'user:y', 'user:m7'];
    const answers = await engine.batchCheck(users.map((user) => ({ user, relation: 'create', object: 'org:acme' })));
    expect(answers).toEqual([true, false, true, false, true]);
  });

  it('a recursive relation hands its batchable usersets to the batched walk, cycles included', async () => {
    const tuples = [
      t('org:acme', 'parent', 'org:sub'),
      t('group:a#member', 'member', 'group:b'),
      t('group:b#member', 'member', 'group:a'),
      t('group:a#member', 'viewer', 'org:acme'),
    ];
    for (let i = 0; i < 12; i++) tuples.push(t(`team:${i}#member`, 'viewer', 'org:acme'), t(`user:m${i}`, 'member', `team:${i}`));
    await engine.write(tuples, []);
    expect(await can('user:m11', 'viewer', 'org:sub')).toBe(true);
    expect(await can('user:stranger', 'viewer', 'org:sub')).toBe(false);
    await engine.write([t('user:g', 'member', 'group:b')], []);
    expect(await can('user:g', 'viewer', 'org:sub')).toBe(true);
    expect(await engine.listObjects('user:m11', 'viewer', 'org')).toEqual(['org:acme', 'org:sub']);
  });

  it('keeps the depth limit: a chain deeper than the limit is never batched, and fails as before', async () => {
    // t0#member <- t1#member <- ... <- t30#member <- user: too deep to batch from the top.
    const types = Array.from(
      { length: 31 },
      (_, i) => `type t${i}\n  relations\n    define member: [user${i < 30 ? `, t${i + 1}#member` : ''}]`,
    );
    ({ engine, dispose } = await swapEngine(`model\n  schema 1.1\ntype user\n${types.join('\n')}\n`));
    const chain = (n: number, user: string) => [
      t(user, 'member', `t${n}:x`),
      ...Array.from({ length: n }, (_, i) => t(`t${i + 1}:x#member`, 'member', `t${i}:x`)),
    ];
    await engine.write(chain(24, 'user:near'), []);
    expect(await can('user:near', 'member', 't0:x')).toBe(true);
    await engine.write([t('user:far', 'member', 't25:x'), t('t25:x#member', 'member', 't24:x')], []);
    await expect(can('user:far', 'member', 't0:x')).rejects.toBeInstanceOf(ResolutionTooComplexError);
    expect(await can('user:far', 'member', 't1:x')).toBe(true);
  });
});

describe('batched checks on the database drivers', () => {
  it('reads through named prepared statements on a Postgres server', async () => {
    await roleWithTeams(4);
    const query = jest.spyOn(pg.Client.prototype, 'query');
    try {
      expect(await can('user:m3', 'create', 'org:acme')).toBe(true);
      const names = query.mock.calls.map(([config]) => (config as unknown as pg.QueryConfig).name);
      expect(names).toHaveLength(3);
      for (const name of names) expect(name).toMatch(/^prepared_\d+$/);
      // The same statement texts again: the same names (pg parses each once per connection).
      query.mockClear();
      expect(await can('user:m2', 'create', 'org:acme')).toBe(true);
      expect(query.mock.calls.map(([config]) => (config as unknown as pg.QueryConfig).name)).toEqual(names);
    } finally {
      query.mockRestore();
    }
  });

  it('runs on the embedded PGlite (one connection), concurrent checks included', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'authz-batched-'));
    const pglite = await openDatabase({ dataDir, schema: 'authz' });
    try {
      await pglite.migrate(ENGINE_MIGRATIONS);
      const embedded = new EmbeddedEngine(pglite, TypeSystem.fromDsl(MODEL), { memory: false });
      const writes = [t('role:r#assignee', 'create', 'org:acme'), t('user:*', 'member', 'team:open')];
      for (let i = 0; i < 12; i++) writes.push(t(`team:${i}#member`, 'assignee', 'role:r'), t(`user:m${i}`, 'member', `team:${i}`));
      await embedded.write(writes, []);
      const ask = (user: string) => embedded.check({ user, relation: 'create', object: 'org:acme' });
      expect(await Promise.all(['user:m11', 'user:x', 'user:m0', 'user:y'].map(ask))).toEqual([true, false, true, false]);
      await embedded.write([t('team:open#member', 'assignee', 'role:r')], []);
      expect(await ask('user:y')).toBe(true);
    } finally {
      await pglite.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** Replaces this test's engine with one over another model. */
async function swapEngine(modelDsl: string) {
  await dispose();
  return database.engine(modelDsl, { memory: false });
}
