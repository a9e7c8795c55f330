import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from '@platform/db';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../../migrations';
import {
  EmbeddedEngine,
  TupleConflictError,
  TypeSystem,
  type AuthzEngine,
  type CheckRequest,
  type Tuple,
  type TupleFilter,
} from '../engine';
import { Roles } from './roles';
import { RowsAndTuples, tupleDiff } from './unit-of-work';

const model = TypeSystem.fromFile();
const t = (user: string, relation: string, object: string): Tuple => ({ user, relation, object });
const ORG = [
  t('site:platform', 'site', 'organization:1'),
  t('organization:1', 'organization', 'team:5'),
  t('team:5#member', 'member', 'organization:1'),
  t('user:7', 'member', 'team:5'),
];

/** An engine other than the embedded one (as OpenFGA is): the same answers, writes that can be made to fail. */
class RemoteLikeEngine implements AuthzEngine {
  failWrites = false;
  constructor(private readonly inner: EmbeddedEngine) {}
  check = (r: CheckRequest) => this.inner.check(r);
  batchCheck = (r: CheckRequest[]) => this.inner.batchCheck(r);
  listRelations = (u: string, o: string, r: string[]) => this.inner.listRelations(u, o, r);
  listObjects = (u: string, r: string, ty: string) => this.inner.listObjects(u, r, ty);
  listUsers = (r: Parameters<AuthzEngine['listUsers']>[0]) => this.inner.listUsers(r);
  readTuples = (f: TupleFilter) => this.inner.readTuples(f);
  async write(writes: Tuple[], deletes: Tuple[]) {
    if (this.failWrites) throw new Error('authorization engine unavailable');
    await this.inner.write(writes, deletes);
  }
}

/** Rows and tuples stay together whichever engine and database hold them. */
function behaviour(open: () => Promise<{ db: Database; close(): Promise<void> }>) {
  let db: Database;
  let close: () => Promise<void>;
  let engine: EmbeddedEngine;
  let roles: Roles;
  const names = async () => (await roles.list(1)).map((r) => r.name);

  beforeAll(async () => {
    ({ db, close } = await open());
    await db.migrate(migrations);
    engine = new EmbeddedEngine(db, model);
    await engine.write(ORG, []);
    roles = new Roles(db, engine, { maxRolesPerTeam: 10 });
  });
  afterAll(() => close?.());

  it('creates, updates and deletes roles with their tuples in one transaction', async () => {
    const role = await roles.create({
      orgId: 1,
      name: 'R',
      description: '',
      permissions: [{ namespace: 'org', action: 'edit' }],
      teamIds: [5],
    });
    expect(await engine.check({ user: 'user:7', relation: 'edit', object: 'organization:1' })).toBe(true);
    await roles.update({ orgId: 1, id: role.id, permissions: [{ namespace: 'org', action: 'admin' }] });
    expect(await engine.check({ user: 'user:7', relation: 'edit', object: 'organization:1' })).toBe(false);
    expect(await engine.check({ user: 'user:7', relation: 'admin', object: 'organization:1' })).toBe(true);
    await roles.delete(1, role.id);
    expect(await engine.check({ user: 'user:7', relation: 'admin', object: 'organization:1' })).toBe(false);
    expect(await names()).toEqual([]);
  });

  it('rolls the rows back when the tuple write fails', async () => {
    const probe = await roles.create({ orgId: 1, name: 'Probe', description: '', permissions: [], teamIds: [] });
    await roles.delete(1, probe.id);
    // The next role id's organization tuple already exists, so writing it is refused (as OpenFGA refuses it).
    const next = probe.id + 1;
    await engine.write([t('organization:1', 'organization', `role:${next}`)], []);
    await expect(
      roles.create({ orgId: 1, name: 'Clash', description: '', permissions: [{ namespace: 'org', action: 'edit' }], teamIds: [5] }),
    ).rejects.toBeInstanceOf(TupleConflictError);
    expect(await names()).toEqual([]);
    expect(await engine.check({ user: 'user:7', relation: 'edit', object: 'organization:1' })).toBe(false);
    expect((await roles.listTeamRoles([5])).size).toBe(0);
    await engine.write([], [t('organization:1', 'organization', `role:${next}`)]);
  });
}

describe('rows and tuples with the embedded engine on a Postgres server', () => {
  behaviour(async () => {
    const database = await createTestDatabase();
    const db = await openDatabase({ url: database.url, dataDir: '', schema: 'authz' });
    return { db, close: async () => (await db.close(), await database.drop()) };
  });
});

describe('rows and tuples with the embedded engine on PGlite (one connection: the tuple write must not wait for another)', () => {
  behaviour(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'roles-uow-'));
    const db = await openDatabase({ dataDir, schema: 'authz' });
    return { db, close: async () => (await db.close(), fs.rmSync(dataDir, { recursive: true, force: true })) };
  });
});

describe('rows and tuples with an engine outside the database (OpenFGA)', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Database;
  let engine: RemoteLikeEngine;
  let roles: Roles;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openDatabase({ url: database.url, dataDir: '', schema: 'authz' });
    await db.migrate(migrations);
    engine = new RemoteLikeEngine(new EmbeddedEngine(db, model));
    await engine.write(ORG, []);
    roles = new Roles(db, engine, { maxRolesPerTeam: 10 });
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('rolls the rows back when the engine refuses the write', async () => {
    const role = await roles.create({ orgId: 1, name: 'Kept', description: 'before', permissions: [], teamIds: [] });
    engine.failWrites = true;
    try {
      await expect(roles.create({ orgId: 1, name: 'Lost', description: '', permissions: [], teamIds: [5] })).rejects.toThrow('unavailable');
      await expect(roles.update({ orgId: 1, id: role.id, description: 'after', teamIds: [5] })).rejects.toThrow('unavailable');
      await expect(roles.delete(1, role.id)).rejects.toThrow('unavailable');
    } finally {
      engine.failWrites = false;
    }
    expect((await roles.list(1)).map((r) => [r.name, r.description, r.team_ids])).toEqual([['Kept', 'before', []]]);
  });

  it('takes the tuples back when the commit fails after they were written', async () => {
    // A deferred foreign key fails only at commit, after the unit's tuple write.
    await db.knex.raw('create table authz.uow_parent (id int primary key)');
    await db.knex.raw('create table authz.uow_child (parent int references authz.uow_parent deferrable initially deferred)');
    const unit = new RowsAndTuples(db, engine);
    const grant = t('user:7', 'owner', 'organization:1');
    await expect(
      unit.run(async (trx) => {
        await trx.raw('insert into authz.uow_child values (42)');
        return { result: undefined, writes: [grant], deletes: [] };
      }),
    ).rejects.toThrow(/foreign key/);
    expect(await engine.readTuples({ object: 'organization:1', relation: 'owner', user: 'user:7' })).toEqual([]);
  });
});

describe('tupleDiff', () => {
  it('writes what is missing and deletes what is no longer wanted, each once', () => {
    const a = t('team:1#member', 'assignee', 'role:1');
    const b = t('team:2#member', 'assignee', 'role:1');
    const c = t('team:3#member', 'assignee', 'role:1');
    expect(tupleDiff([a, b], [b, c, c])).toEqual({ writes: [c], deletes: [a] });
    expect(tupleDiff([a], [a])).toEqual({ writes: [], deletes: [] });
  });
});
