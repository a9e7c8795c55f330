import { CheckResolver } from './check';
import { withContextualTuples } from './contextual';
import { TypeSystem } from './model';
import type { TupleSource } from './source';
import { parseObject, parseUser } from './tuple';

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

const empty: TupleSource = { readUsers: async () => [], readObjectIds: async () => [] };

function countingSource(tuples: [string, string, string][]) {
  const inner = withContextualTuples(
    empty,
    tuples.map(([user, relation, object]) => ({ user: parseUser(user), relation, object: parseObject(object) })),
  );
  const source = {
    reads: 0,
    readUsers: (...args: Parameters<TupleSource['readUsers']>) => {
      source.reads++;
      return inner.readUsers(...args);
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
