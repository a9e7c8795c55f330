import { CheckResolver } from './check';
import { withContextualTuples } from './contextual';
import { PLATFORM_MODEL_FILE, TypeSystem } from './model';
import type { TupleSource, UsersRead } from './source';
import { formatUser, parseObject, parseUser } from './tuple';
import type { Tuple } from './types';

// The resolver over an in-memory source, to see how often it reads.
const MODEL = TypeSystem.fromDsl(`model
  schema 1.1
type user
type org
  relations
    define owner: [user]
    define a: [user] or owner
    define b: [user] or owner or a
    define c: b and a and owner
`);

const empty: TupleSource = { readUsers: async (reads) => reads.map(() => new Map()), readObjectIds: async () => [] };

function countingSource(tuples: [string, string, string][]) {
  const inner = withContextualTuples(
    empty,
    tuples.map(([user, relation, object]) => ({ user: parseUser(user), relation, object: parseObject(object) })),
  );
  const source = {
    /** Object#relation pairs read, however many went in one call. */
    reads: 0,
    /** Calls, each one round trip. */
    calls: 0,
    readUsers: (reads: UsersRead[]) => {
      source.calls++;
      source.reads += reads.reduce((n, r) => n + r.objectIds.length, 0);
      return inner.readUsers(reads);
    },
    readObjectIds: inner.readObjectIds,
  };
  return source;
}

describe('CheckResolver', () => {
  it('reads each object#relation once per check however often the rewrite reaches it', async () => {
    const source = countingSource([['user:anne', 'owner', 'org:1']]);
    const resolver = new CheckResolver(MODEL, source);
    // c = b and a and owner; b = .. or owner or a; a = .. or owner: owner is reached four times, read once.
    expect(await resolver.check(parseObject('org:1'), 'c', parseUser('user:anne'))).toBe(true);
    expect(source.reads).toBe(3); // a, b and owner, each once
    expect(source.calls).toBe(1); // b is an acyclic union: its first level (b, a, owner) is one round trip
  });

  it('reuses answers across checks of one resolver (a batch)', async () => {
    const source = countingSource([]);
    const resolver = new CheckResolver(MODEL, source);
    expect(await resolver.check(parseObject('org:1'), 'b', parseUser('user:bob'))).toBe(false);
    const after = source.reads;
    expect(await resolver.check(parseObject('org:1'), 'c', parseUser('user:bob'))).toBe(false);
    expect(source.reads).toBe(after);
  });
});

describe('batched resolution', () => {
  const platform = TypeSystem.fromFile(PLATFORM_MODEL_FILE);

  it('walks a denied organization permission in one round trip per level, however many roles and teams', async () => {
    // organization:o#create_role <- 5 roles#assignee <- 4 teams each#member <- users; also owner and admin from site.
    const tuples: [string, string, string][] = [
      ['site:platform', 'site', 'organization:o'],
      ['user:owner', 'owner', 'organization:o'],
      ['user:root', 'admin', 'site:platform'],
    ];
    for (let r = 0; r < 5; r++) {
      tuples.push([`role:r${r}#assignee`, 'create_role', 'organization:o']);
      for (let t = 0; t < 4; t++) {
        tuples.push([`team:t${r}-${t}#member`, 'assignee', `role:r${r}`]);
        tuples.push([`user:m${r}-${t}`, 'member', `team:t${r}-${t}`]);
      }
    }
    const ask = async (user: string) => {
      const source = countingSource(tuples);
      const allowed = await new CheckResolver(platform, source).check(parseObject('organization:o'), 'create_role', parseUser(user));
      return { allowed, calls: source.calls, reads: source.reads };
    };
    // Level 1: o#create_role, o#owner, o#site; level 2: 5 roles, site:platform#admin; level 3: 20 teams.
    expect(await ask('user:stranger')).toEqual({ allowed: false, calls: 3, reads: 3 + 6 + 20 });
    expect(await ask('user:m4-3')).toEqual({ allowed: true, calls: 3, reads: 3 + 6 + 20 });
    expect((await ask('user:owner')).allowed).toBe(true);
    expect(await ask('user:root')).toEqual({ allowed: true, calls: 2, reads: 3 + 6 });
  });

  // The batched walk must answer exactly as the one-object-at-a-time walk does: random tuples on models with
  // and without recursion, intersection and exclusion, every answer (and error) compared.
  const MIXED = TypeSystem.fromDsl(`model
  schema 1.1
type user
type group
  relations
    define member: [user, user:*, group#member]
type team
  relations
    define member: [user, user:*]
    define lead: [user]
    define staff: member or lead
type role
  relations
    define assignee: [user, team#member, team#staff]
type site
  relations
    define admin: [user]
type org
  relations
    define site: [site]
    define parent: [org]
    define owner: [user, team#member]
    define blocked: [user, group#member]
    define approved: [user, role#assignee]
    define create: [role#assignee] or owner or admin from site
    define safe_create: create but not blocked
    define both: create and approved
    define viewer: [user, team#staff, group#member, role#assignee] or create or viewer from parent
    define parent_create: create from parent
`);

  /** A deterministic pseudo-random generator (mulberry32). */
  const random = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const IDS = ['a', 'b', 'c', 'd'];

  function randomTuples(model: TypeSystem, next: () => number, count: number): Tuple[] {
    const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)];
    const assignable = model.model.type_definitions.flatMap((d) =>
      model.relationsOf(d.type).flatMap((relation) => model.directTypes(d.type, relation).map((r) => ({ type: d.type, relation, r }))),
    );
    const seen = new Set<string>();
    const out: Tuple[] = [];
    for (let i = 0; i < count; i++) {
      const { type, relation, r } = pick(assignable);
      const user = r.wildcard ? `${r.type}:*` : r.relation ? `${r.type}:${pick(IDS)}#${r.relation}` : `${r.type}:${pick(IDS)}`;
      const tuple = { user, relation, object: `${type}:${pick(IDS)}` };
      const key = `${tuple.user} ${tuple.relation} ${tuple.object}`;
      if (!seen.has(key)) out.push(tuple);
      seen.add(key);
    }
    return out;
  }

  async function answer(resolver: CheckResolver, object: string, relation: string, user: string): Promise<string> {
    try {
      return String(await resolver.check(parseObject(object), relation, parseUser(user)));
    } catch (err) {
      return (err as Error).constructor.name;
    }
  }

  it.each([
    ['the platform model', platform, 8, 150],
    ['a model mixing recursion, intersection and exclusion with batchable relations', MIXED, 30, 120],
  ])('answers as the depth-first walk on %s', async (_name, model, seeds, tupleCount) => {
    const types = model.model.type_definitions.map((d) => d.type);
    const objects = types.flatMap((type) =>
      model.relationsOf(type).flatMap((relation) => IDS.map((id) => ({ object: `${type}:${id}`, relation }))),
    );
    let allowed = 0;
    let denied = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const next = random(seed);
      const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)];
      const tuples = randomTuples(model, next, tupleCount);
      const source = withContextualTuples(
        empty,
        tuples.map((t) => ({ ...model.validateTuple(t), relation: t.relation })),
      );
      // Every object#relation, asked for each plain user, the wildcard, and a few usersets and other objects.
      const users = [...IDS.map((id) => `user:${id}`), 'user:*'];
      for (let i = 0; i < 3; i++) {
        const type = pick(types);
        users.push(formatUser({ type, id: pick(IDS), relation: next() < 0.7 ? pick(['', ...model.relationsOf(type)]) : '' }));
      }
      // One shared resolver per walk as well, as a batch check uses it: memoised answers must agree too.
      const shared = new CheckResolver(model, source);
      const sharedReference = new CheckResolver(model, source, { batch: false });
      for (const { object, relation } of objects) {
        for (const user of users) {
          const expected = await answer(new CheckResolver(model, source, { batch: false }), object, relation, user);
          const got = await answer(new CheckResolver(model, source), object, relation, user);
          if (got !== expected) expect({ seed, object, relation, user, got }).toEqual({ seed, object, relation, user, got: expected });
          expect(await answer(shared, object, relation, user)).toBe(await answer(sharedReference, object, relation, user));
          if (expected === 'true') allowed++;
          else denied++;
        }
      }
    }
    // The random tuples grant enough for the comparison to mean something.
    expect(allowed).toBeGreaterThan((allowed + denied) / 20);
  });
});
