import { openEngineDatabase } from './test/engine-db';
import { InvalidTupleError, ResolutionTooComplexError, TupleConflictError } from './errors';
import type { EmbeddedEngine, EmbeddedEngineOptions } from './embedded-engine';
import { TUPLES_TABLE } from './tuple-store';
import type { Database } from '@platform/db';

// A small model exercising every rewrite the engine evaluates.
const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, user:*, group#member]
type folder
  relations
    define owner: [user]
    define parent: [folder]
    define approved: [user]
    define blocked: [user, group#member]
    define viewer: [user, user:*, group#member] or owner or viewer from parent
    define can_view: viewer but not blocked
    define can_edit: owner and approved
type doc
  relations
    define folder: [folder]
    define reader: viewer from folder
    define editor: can_edit from folder
`;

const t = (user: string, relation: string, object: string) => ({ user, relation, object });

let database: Awaited<ReturnType<typeof openEngineDatabase>>;
let engine: EmbeddedEngine;
let db: Database;
let dispose: () => Promise<void>;

beforeAll(async () => {
  database = await openEngineDatabase();
});
afterAll(async () => {
  await database?.close();
});
// Every behaviour holds whether checks read the tuples from memory or from the table.
describe.each([
  ['from memory', {}],
  ['from the table', { memory: false }],
] as [string, EmbeddedEngineOptions][])('reading tuples %s', (_how, options) => {
  beforeEach(async () => {
    ({ engine, db, dispose } = await database.engine(MODEL, options));
    // Loaded before the test writes anything: every change reaches memory through the change log.
    await engine.load();
  });
  afterEach(async () => {
    await dispose();
  });

  const can = (user: string, relation: string, object: string) => engine.check({ user, relation, object });

  describe('direct relations', () => {
    it('grants a user named in a tuple and nobody else', async () => {
      await engine.write([t('user:anne', 'owner', 'folder:x')], []);
      expect(await can('user:anne', 'owner', 'folder:x')).toBe(true);
      expect(await can('user:bob', 'owner', 'folder:x')).toBe(false);
      expect(await can('user:anne', 'owner', 'folder:y')).toBe(false);
    });

    it('follows a userset (group#member) to its members, nested groups included', async () => {
      await engine.write(
        [
          t('group:eng#member', 'viewer', 'folder:x'),
          t('group:backend#member', 'member', 'group:eng'),
          t('user:anne', 'member', 'group:backend'),
        ],
        [],
      );
      expect(await can('user:anne', 'viewer', 'folder:x')).toBe(true);
      expect(await can('user:bob', 'viewer', 'folder:x')).toBe(false);
      // A userset as the user: the set itself is what was granted.
      expect(await can('group:eng#member', 'viewer', 'folder:x')).toBe(true);
      expect(await can('group:backend#member', 'viewer', 'folder:x')).toBe(true);
      expect(await can('group:eng#member', 'member', 'group:eng')).toBe(true);
    });

    it('a wildcard grants every user of its type, and only of its type', async () => {
      await engine.write([t('user:*', 'viewer', 'folder:public')], []);
      expect(await can('user:anne', 'viewer', 'folder:public')).toBe(true);
      expect(await can('user:*', 'viewer', 'folder:public')).toBe(true);
      expect(await can('group:eng#member', 'viewer', 'folder:public')).toBe(false);
      expect(await can('user:anne', 'viewer', 'folder:private')).toBe(false);
    });

    it('a wildcard member of a group makes everyone a member', async () => {
      await engine.write([t('user:*', 'member', 'group:all'), t('group:all#member', 'viewer', 'folder:x')], []);
      expect(await can('user:zed', 'viewer', 'folder:x')).toBe(true);
    });
  });

  describe('rewrites', () => {
    it('computed usersets: owners are viewers', async () => {
      await engine.write([t('user:anne', 'owner', 'folder:x')], []);
      expect(await can('user:anne', 'viewer', 'folder:x')).toBe(true);
    });

    it('tuple-to-userset: viewers of a parent folder view its subfolders and their docs', async () => {
      await engine.write(
        [
          t('user:anne', 'viewer', 'folder:root'),
          t('folder:root', 'parent', 'folder:sub'),
          t('folder:sub', 'parent', 'folder:subsub'),
          t('folder:subsub', 'folder', 'doc:1'),
        ],
        [],
      );
      expect(await can('user:anne', 'viewer', 'folder:subsub')).toBe(true);
      expect(await can('user:anne', 'reader', 'doc:1')).toBe(true);
      expect(await can('user:bob', 'reader', 'doc:1')).toBe(false);
      expect(await can('user:anne', 'reader', 'doc:2')).toBe(false);
    });

    it('intersection: editing needs both owner and approved', async () => {
      await engine.write(
        [t('user:anne', 'owner', 'folder:x'), t('user:bob', 'approved', 'folder:x'), t('folder:x', 'folder', 'doc:1')],
        [],
      );
      expect(await can('user:anne', 'can_edit', 'folder:x')).toBe(false);
      expect(await can('user:bob', 'can_edit', 'folder:x')).toBe(false);
      await engine.write([t('user:anne', 'approved', 'folder:x')], []);
      expect(await can('user:anne', 'can_edit', 'folder:x')).toBe(true);
      expect(await can('user:anne', 'editor', 'doc:1')).toBe(true);
    });

    it('exclusion: a blocked viewer (directly or through a group) cannot view', async () => {
      await engine.write(
        [
          t('user:*', 'viewer', 'folder:x'),
          t('user:mallory', 'blocked', 'folder:x'),
          t('group:banned#member', 'blocked', 'folder:x'),
          t('user:eve', 'member', 'group:banned'),
        ],
        [],
      );
      expect(await can('user:anne', 'can_view', 'folder:x')).toBe(true);
      expect(await can('user:mallory', 'can_view', 'folder:x')).toBe(false);
      expect(await can('user:eve', 'can_view', 'folder:x')).toBe(false);
      expect(await can('user:mallory', 'viewer', 'folder:x')).toBe(true);
    });
  });

  describe('cycles and depth', () => {
    it('a cycle of groups ends as not allowed, and members inside it are still found', async () => {
      await engine.write([t('group:a#member', 'member', 'group:b'), t('group:b#member', 'member', 'group:a')], []);
      expect(await can('user:anne', 'member', 'group:a')).toBe(false);
      await engine.write([t('user:anne', 'member', 'group:b')], []);
      expect(await can('user:anne', 'member', 'group:a')).toBe(true);
      expect(await can('user:anne', 'member', 'group:b')).toBe(true);
      expect(await engine.listObjects('user:anne', 'member', 'group')).toEqual(['group:a', 'group:b']);
    });

    it('a cycle in the subtracted set denies rather than grants (as OpenFGA)', async () => {
      await engine.write(
        [
          t('user:anne', 'viewer', 'folder:x'),
          t('group:a#member', 'blocked', 'folder:x'),
          t('group:a#member', 'member', 'group:b'),
          t('group:b#member', 'member', 'group:a'),
        ],
        [],
      );
      expect(await can('user:anne', 'can_view', 'folder:x')).toBe(false);
    });

    // group:g0 <- g1#member <- ... <- g{n}#member <- user:anne: checking g0 dispatches n nested lookups.
    const chain = async (n: number) => {
      const tuples = [t('user:anne', 'member', `group:g${n}`)];
      for (let i = 0; i < n; i++) tuples.push(t(`group:g${i + 1}#member`, 'member', `group:g${i}`));
      await engine.write(tuples, []);
    };

    it('resolves 24 nested lookups', async () => {
      await chain(24);
      expect(await can('user:anne', 'member', 'group:g0')).toBe(true);
    });

    it('gives up at the 25th nested lookup, like OpenFGA', async () => {
      await chain(25);
      await expect(can('user:anne', 'member', 'group:g0')).rejects.toBeInstanceOf(ResolutionTooComplexError);
      expect(await can('user:anne', 'member', 'group:g1')).toBe(true);
    });
  });

  describe('write', () => {
    it('a deleted tuple stops granting at once (revocation, read-your-writes)', async () => {
      await engine.write([t('user:anne', 'member', 'group:eng'), t('group:eng#member', 'viewer', 'folder:x')], []);
      expect(await can('user:anne', 'viewer', 'folder:x')).toBe(true);
      await engine.write([], [t('user:anne', 'member', 'group:eng')]);
      expect(await can('user:anne', 'viewer', 'folder:x')).toBe(false);
    });

    it('writing an existing tuple is a TupleConflictError', async () => {
      await engine.write([t('user:anne', 'owner', 'folder:x')], []);
      await expect(engine.write([t('user:anne', 'owner', 'folder:x')], [])).rejects.toThrow(TupleConflictError);
      await expect(engine.write([t('user:anne', 'owner', 'folder:x')], [])).rejects.toThrow(/already exists: user:anne owner folder:x/);
    });

    it('deleting a missing tuple is a TupleConflictError', async () => {
      await expect(engine.write([], [t('user:anne', 'owner', 'folder:x')])).rejects.toThrow(TupleConflictError);
      await expect(engine.write([], [t('user:anne', 'owner', 'folder:x')])).rejects.toThrow(/does not exist: user:anne owner folder:x/);
    });

    it('is all-or-nothing: a failing delete rolls back the writes of the same call', async () => {
      await engine.write([t('user:anne', 'owner', 'folder:x')], []);
      const call = engine.write(
        [t('user:bob', 'owner', 'folder:x'), t('user:carl', 'owner', 'folder:x')],
        [t('user:anne', 'owner', 'folder:x'), t('user:nobody', 'owner', 'folder:x')],
      );
      await expect(call).rejects.toThrow(TupleConflictError);
      expect(await engine.readTuples({ object: 'folder:x' })).toEqual([t('user:anne', 'owner', 'folder:x')]);
    });

    it('is all-or-nothing: one existing tuple among new ones writes none of them', async () => {
      await engine.write([t('user:anne', 'owner', 'folder:x')], []);
      const writes = [t('user:bob', 'owner', 'folder:x'), t('user:anne', 'owner', 'folder:x')];
      await expect(engine.write(writes, [])).rejects.toThrow(TupleConflictError);
      expect(await can('user:bob', 'owner', 'folder:x')).toBe(false);
    });

    it('writes and deletes large batches in one call', async () => {
      const many = Array.from({ length: 2500 }, (_, i) => t(`user:u${i}`, 'member', 'group:big'));
      await engine.write(many, []);
      expect(await can('user:u2499', 'member', 'group:big')).toBe(true);
      await engine.write([], many);
      expect(await engine.readTuples({ object: 'group:big' })).toEqual([]);
    });

    it.each([
      ['an unknown type', t('user:anne', 'owner', 'drive:x'), /type 'drive' is not in the model/],
      ['an unknown relation', t('user:anne', 'editor', 'folder:x'), /relation 'editor' is not defined on type 'folder'/],
      ['a relation that is not directly assignable', t('user:anne', 'can_view', 'folder:x'), /not directly assignable/],
      ['a user type the relation does not accept', t('group:eng', 'owner', 'folder:x'), /accepts only \[user\]/],
      ['a userset the relation does not accept', t('group:eng#member', 'owner', 'folder:x'), /accepts only \[user\]/],
      ['a wildcard the relation does not accept', t('user:*', 'owner', 'folder:x'), /accepts only \[user\]/],
      ['a malformed object', t('user:anne', 'owner', 'folder'), /invalid object/],
      ['a wildcard object', t('user:anne', 'owner', 'folder:*'), /invalid object/],
      ['a malformed user', t('anne', 'owner', 'folder:x'), /invalid user/],
    ])('rejects %s with InvalidTupleError', async (_what, tuple, message) => {
      const call = engine.write([tuple], []);
      await expect(call).rejects.toBeInstanceOf(InvalidTupleError);
      await expect(engine.write([tuple], [])).rejects.toThrow(message);
    });

    it('rejects a request naming one tuple twice', async () => {
      const dup = t('user:anne', 'owner', 'folder:x');
      await expect(engine.write([dup], [dup])).rejects.toThrow(/duplicate tuple/);
    });
  });

  describe('reads and queries', () => {
    beforeEach(async () => {
      await engine.write(
        [
          t('user:anne', 'owner', 'folder:a'),
          t('user:anne', 'member', 'group:eng'),
          t('group:eng#member', 'viewer', 'folder:b'),
          t('folder:a', 'parent', 'folder:c'),
          t('user:bob', 'owner', 'folder:d'),
          t('user:anne', 'blocked', 'folder:c'),
        ],
        [],
      );
    });

    it('lists objects through usersets, computed relations and parents, and applies exclusion', async () => {
      expect(await engine.listObjects('user:anne', 'viewer', 'folder')).toEqual(['folder:a', 'folder:b', 'folder:c']);
      expect(await engine.listObjects('user:anne', 'can_view', 'folder')).toEqual(['folder:a', 'folder:b']);
      expect(await engine.listObjects('user:bob', 'viewer', 'folder')).toEqual(['folder:d']);
      expect(await engine.listObjects('user:carl', 'viewer', 'folder')).toEqual([]);
      expect(await engine.listObjects('group:eng#member', 'viewer', 'folder')).toEqual(['folder:b']);
    });

    it('stops a list at the maximum asked, as OpenFGA does, leaving the rest out', async () => {
      const all = await engine.listObjects('user:anne', 'viewer', 'folder');
      expect(all).toEqual(['folder:a', 'folder:b', 'folder:c']);
      const two = await engine.listObjects('user:anne', 'viewer', 'folder', { maxResults: 2 });
      expect(two).toHaveLength(2);
      expect(all).toEqual(expect.arrayContaining(two));
      await engine.write([t('user:bob', 'owner', 'folder:a')], []);
      const owners = { object: 'folder:a', relation: 'owner', userFilters: [{ type: 'user' }] };
      expect(await engine.listUsers(owners)).toEqual(['user:anne', 'user:bob']);
      const one = await engine.listUsers({ ...owners, maxResults: 1 });
      expect(one).toHaveLength(1);
      expect(['user:anne', 'user:bob']).toEqual(expect.arrayContaining(one));
    });

    it('lists objects granted by a wildcard', async () => {
      await engine.write([t('user:*', 'viewer', 'folder:public')], []);
      expect(await engine.listObjects('user:zed', 'viewer', 'folder')).toEqual(['folder:public']);
    });

    it('lists the relations a user holds on an object, in the order asked', async () => {
      expect(await engine.listRelations('user:anne', 'folder:c', ['can_view', 'viewer', 'blocked', 'owner'])).toEqual([
        'viewer',
        'blocked',
      ]);
    });

    it('answers a batch in request order', async () => {
      const answers = await engine.batchCheck([
        { user: 'user:anne', relation: 'viewer', object: 'folder:b' },
        { user: 'user:bob', relation: 'viewer', object: 'folder:b' },
        { user: 'user:bob', relation: 'owner', object: 'folder:d' },
      ]);
      expect(answers).toEqual([true, false, true]);
    });

    it('counts contextual tuples for one check without storing them', async () => {
      const contextualTuples = [t('user:bob', 'member', 'group:eng')];
      expect(await engine.check({ user: 'user:bob', relation: 'viewer', object: 'folder:b', contextualTuples })).toBe(true);
      expect(await can('user:bob', 'viewer', 'folder:b')).toBe(false);
      await expect(
        engine.check({ user: 'user:bob', relation: 'viewer', object: 'folder:b', contextualTuples: [t('user:bob', 'x', 'group:eng')] }),
      ).rejects.toThrow(InvalidTupleError);
    });

    it('reads stored tuples by object, type, relation and user', async () => {
      expect(await engine.readTuples({ object: 'folder:a' })).toEqual([t('user:anne', 'owner', 'folder:a')]);
      expect(await engine.readTuples({ object: 'group:' })).toEqual([t('user:anne', 'member', 'group:eng')]);
      expect(await engine.readTuples({ user: 'user:anne', relation: 'owner' })).toEqual([t('user:anne', 'owner', 'folder:a')]);
      expect(await engine.readTuples({ user: 'group:eng#member' })).toEqual([t('group:eng#member', 'viewer', 'folder:b')]);
      expect(await engine.readTuples({})).toHaveLength(6);
    });

    it('rejects checks on types or relations the model lacks', async () => {
      await expect(can('user:anne', 'nope', 'folder:a')).rejects.toThrow(/relation 'nope' is not defined/);
      await expect(can('robot:1', 'viewer', 'folder:a')).rejects.toThrow(/type 'robot' is not in the model/);
    });

    it('ignores stored tuples the model does not accept (left over from an older model)', async () => {
      await db
        .table(TUPLES_TABLE)
        .insert({ object_type: 'folder', object_id: 'a', relation: 'owner', user_type: 'group', user_id: 'eng', user_relation: 'member' });
      expect(await can('user:anne', 'owner', 'folder:a')).toBe(true);
      expect(await can('group:eng#member', 'owner', 'folder:a')).toBe(false);
      // ...and they can still be deleted.
      await engine.write([], [t('group:eng#member', 'owner', 'folder:a')]);
    });
  });
});
