import type { TupleSource, UsersRead } from './source';
import type { UserRef } from './tuple';
import { TupleCache } from './tuple-cache';
import type { TupleRow } from './tuple-store';

// The cache of table mode against a table kept in a Set: the same answers as the table after any mix of reads and
// changes, never more than its bound, and no answer kept that a change overtook.

/** A table of `team:<object>#member@user:<user>` tuples, counting the reads that reach it. */
function table() {
  const tuples = new Set<string>();
  const key = (objectId: string, userId: string) => `${objectId}|${userId}`;
  const source: TupleSource & { reads: number } = {
    reads: 0,
    async readUsers(reads: UsersRead[]) {
      source.reads++;
      return reads.map((r) => {
        const found = new Map<string, UserRef[]>();
        for (const objectId of r.objectIds) {
          for (const shape of r.shapes) {
            const ids = shape.ids ?? [...tuples].filter((t) => t.startsWith(`${objectId}|`)).map((t) => t.split('|')[1]);
            for (const id of ids) {
              if (!tuples.has(key(objectId, id))) continue;
              found.set(objectId, [...(found.get(objectId) ?? []), { type: shape.type, id, relation: shape.relation }]);
            }
          }
        }
        return found;
      });
    },
    async readObjectIds() {
      return [];
    },
  };
  return { source, tuples, key };
}

const row = (objectId: string, userId: string): TupleRow => ({
  object_type: 'team',
  object_id: objectId,
  relation: 'member',
  user_type: 'user',
  user_id: userId,
  user_relation: '',
});
const read = (objectIds: string[], ids?: string[]): UsersRead[] => [
  { objectType: 'team', objectIds, relation: 'member', shapes: [{ type: 'user', relation: '', ...(ids && { ids }) }] },
];
/** A read's answer as sorted ids per object. */
const ids = async (answer: Promise<Map<string, UserRef[]>[]>, objectIds: string[]) => {
  const [found] = await answer;
  return objectIds.map((o) => (found.get(o) ?? []).map((u) => u.id).sort());
};

it('answers as the table does after any mix of reads and changes, within its bound', async () => {
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pick = (n: number) => String(Math.floor(next() * n));
  for (const bound of [20, 100, 1000]) {
    const { source, tuples, key } = table();
    const cache = new TupleCache(source, bound);
    for (let i = 0; i < 3000; i++) {
      const [objectId, userId] = [pick(30), pick(40)];
      if (next() < 0.2) {
        // A change to the table, then its logged change.
        if (!tuples.delete(key(objectId, userId))) tuples.add(key(objectId, userId));
        cache.evict(row(objectId, userId));
        continue;
      }
      const objectIds = [...new Set([objectId, pick(30)])];
      const users = next() < 0.5 ? undefined : [...new Set([userId, pick(40)])];
      const expected = await ids(source.readUsers(read(objectIds, users)), objectIds);
      expect(await ids(cache.readUsers(read(objectIds, users)), objectIds)).toEqual(expected);
      expect(cache.size).toBeLessThanOrEqual(bound);
    }
    expect(cache.size).toBeGreaterThan(Math.min(bound / 2, 150));
  }
});

it('keeps no answer of a read that a change overtook, however many changes came meanwhile', async () => {
  for (const changes of [1, 20_000]) {
    const { source, tuples, key } = table();
    const cache = new TupleCache(source, 1000);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const readUsers = source.readUsers.bind(source);
    source.readUsers = async (reads) => {
      const found = await readUsers(reads);
      await gate;
      return found;
    };
    const asked = cache.readUsers(read(['a'], ['ann']));
    tuples.add(key('a', 'ann'));
    for (let i = 1; i < changes; i++) cache.evict(row(`other${i}`, 'bob'));
    cache.evict(row('a', 'ann'));
    release();
    expect(await ids(asked, ['a'])).toEqual([[]]);
    source.readUsers = readUsers;
    expect(await ids(cache.readUsers(read(['a'], ['ann'])), ['a'])).toEqual([['ann']]);
  }
});
