import { CheckResolver } from '../check';
import { withContextualTuples, type ParsedTuple } from '../contextual';
import { TypeSystem } from '../model';
import type { TupleSource } from '../source';
import { formatUser, parseObject, parseUser } from '../tuple';
import type { Tuple } from '../types';

// Random tuples and questions for comparing two ways of answering checks.

/** A model mixing recursion, intersection and exclusion with relations the batched walk takes. */
export const MIXED_DSL = `model
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
`;
export const MIXED = TypeSystem.fromDsl(MIXED_DSL);

/** A deterministic pseudo-random generator (mulberry32). */
export const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
};

/** The object ids the tuples and questions use: few, so tuples meet. */
export const IDS = ['a', 'b', 'c', 'd'];

/** Up to `count` distinct tuples the model accepts, on objects of IDS. */
export function randomTuples(model: TypeSystem, next: () => number, count: number): Tuple[] {
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

/** Every object#relation of the model on IDS, and the users to ask about: each plain user, the wildcard, a few usersets and other objects. */
export function randomQuestions(model: TypeSystem, next: () => number) {
  const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)];
  const types = model.model.type_definitions.map((d) => d.type);
  const objects = types.flatMap((type) =>
    model.relationsOf(type).flatMap((relation) => IDS.map((id) => ({ object: `${type}:${id}`, relation }))),
  );
  const users = [...IDS.map((id) => `user:${id}`), 'user:*'];
  for (let i = 0; i < 3; i++) {
    const type = pick(types);
    users.push(formatUser({ type, id: pick(IDS), relation: next() < 0.7 ? pick(['', ...model.relationsOf(type)]) : '' }));
  }
  return { objects, users };
}

/** A resolver's answer as a string: true, false, or the name of the error it failed with. */
export async function answer(resolver: CheckResolver, object: string, relation: string, user: string): Promise<string> {
  try {
    return String(await resolver.check(parseObject(object), relation, parseUser(user)));
  } catch (err) {
    return (err as Error).constructor.name;
  }
}

/** A source holding no tuple. */
export const EMPTY_SOURCE: TupleSource = { readUsers: async (reads) => reads.map(() => new Map()), readObjectIds: async () => [] };

/**
 * The tuples as a source read in memory: what `withContextualTuples` answers over them, each read looking only at the
 * tuples of its object type and relation rather than at every tuple (the comparisons ask thousands of questions).
 */
export function memorySource(tuples: ParsedTuple[]): TupleSource {
  const byKind = new Map<string, ParsedTuple[]>();
  for (const t of tuples) {
    const key = `${t.object.type}#${t.relation}`;
    let kind = byKind.get(key);
    if (!kind) byKind.set(key, (kind = []));
    kind.push(t);
  }
  const sources = new Map([...byKind].map(([key, kind]) => [key, withContextualTuples(EMPTY_SOURCE, kind)]));
  const of = (objectType: string, relation: string) => sources.get(`${objectType}#${relation}`) ?? EMPTY_SOURCE;
  return {
    readUsers: (reads) => Promise.all(reads.map(async (read) => (await of(read.objectType, read.relation).readUsers([read]))[0])),
    readObjectIds: (objectType, relation, users) => of(objectType, relation).readObjectIds(objectType, relation, users),
  };
}
