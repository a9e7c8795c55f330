import { IPAddress } from './conditions';
import { ConditionError, InvalidTupleError, TupleConflictError } from './errors';
import { TypeSystem } from './model';
import { openEngineDatabase } from './test/engine-db';

// Conditioned tuples in the embedded engine: the error cases OpenFGA answers, persistence and the in-memory copy.
const MODEL = `model
  schema 1.1
type user
type doc
  relations
    define owner: [user]
    define viewer: [user with not_expired, user:* with from_network] or owner
    define either: [user with not_expired, user]

condition not_expired(current_time: timestamp, expires_at: timestamp) {
  current_time < expires_at
}

condition from_network(ip: ipaddress, cidr: string) {
  ip.in_cidr(cidr)
}
`;

const until = (expires_at: string) => ({ name: 'not_expired', context: { expires_at } });

let database: Awaited<ReturnType<typeof openEngineDatabase>>;

beforeAll(async () => {
  database = await openEngineDatabase();
});
afterAll(async () => {
  await database?.close();
});

describe('conditions in checks', () => {
  it('a missing parameter is an error naming it, unless something else grants', async () => {
    const { engine, dispose } = await database.engine(MODEL, { memory: false });
    try {
      await engine.write([{ user: 'user:anne', relation: 'viewer', object: 'doc:1', condition: until('2030-01-01T00:00:00Z') }], []);
      const asked = engine.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1' });
      await expect(asked).rejects.toBeInstanceOf(ConditionError);
      await expect(asked).rejects.toThrow(
        "failed to evaluate relationship condition: 'not_expired' - tuple 'doc:1#viewer@user:anne' is missing context parameters '[current_time]'",
      );
      // The owner relation grants without any condition: the unevaluable tuple does not matter then.
      await engine.write([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }], []);
      expect(await engine.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1' })).toBe(true);
      // A user with no tuple at all is simply denied: no condition is met on the way.
      expect(await engine.check({ user: 'user:bob', relation: 'either', object: 'doc:1' })).toBe(false);
    } finally {
      await dispose();
    }
  });

  it('a parameter of the wrong type is an error naming it', async () => {
    const { engine, dispose } = await database.engine(MODEL, { memory: false });
    try {
      await engine.write([{ user: 'user:anne', relation: 'viewer', object: 'doc:1', condition: until('2030-01-01T00:00:00Z') }], []);
      await expect(
        engine.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1', context: { current_time: 'yesterday' } }),
      ).rejects.toThrow(/'not_expired' - failed to convert context parameter 'current_time'/);
      await expect(engine.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1', context: { current_time: 17 } })).rejects.toThrow(
        /failed to convert context parameter 'current_time': expected timestamp, got 17/,
      );
    } finally {
      await dispose();
    }
  });

  it('list-users and list-objects fail on a condition they cannot evaluate', async () => {
    const { engine, dispose } = await database.engine(MODEL);
    try {
      await engine.write([{ user: 'user:anne', relation: 'viewer', object: 'doc:1', condition: until('2030-01-01T00:00:00Z') }], []);
      await expect(engine.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [{ type: 'user' }] })).rejects.toThrow(
        /missing context parameters '\[current_time\]'/,
      );
      await expect(engine.listObjects('user:anne', 'viewer', 'doc')).rejects.toBeInstanceOf(ConditionError);
      const now = { current_time: '2026-01-01T00:00:00Z' };
      expect(await engine.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [{ type: 'user' }], context: now })).toEqual([
        'user:anne',
      ]);
      expect(await engine.listObjects('user:anne', 'viewer', 'doc', { context: now })).toEqual(['doc:1']);
      await expect(engine.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [] })).rejects.toBeInstanceOf(InvalidTupleError);
      await expect(engine.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [{ type: 'folder' }] })).rejects.toThrow(
        "type 'folder' is not in the model",
      );
    } finally {
      await dispose();
    }
  });
});

describe('as OpenFGA answers them', () => {
  it("a double parameter beyond float64's range is an error, not infinity", async () => {
    const model = `model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user with positive]\n\ncondition positive(x: double) {\n  x > 0.0\n}\n`;
    const { engine, dispose } = await database.engine(model, { memory: false });
    try {
      await engine.write([{ user: 'user:anne', relation: 'viewer', object: 'doc:1', condition: { name: 'positive' } }], []);
      const check = (x: unknown) => engine.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1', context: { x } });
      expect(await check(1.7976931348623157e308)).toBe(true);
      expect(await check('2.5')).toBe(true);
      expect(await check(-1)).toBe(false);
      // A JSON literal beyond the range arrives as ±Infinity; a string beyond it parses to one.
      for (const x of ['1.8e308', '-1.8e308', Infinity, -Infinity]) {
        await expect(check(x)).rejects.toThrow(/'positive' - failed to convert context parameter 'x': expected double/);
      }
      await expect(engine.listObjects('user:anne', 'viewer', 'doc', { context: { x: '1e309' } })).rejects.toBeInstanceOf(ConditionError);
      await expect(
        engine.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [{ type: 'user' }], context: { x: Infinity } }),
      ).rejects.toBeInstanceOf(ConditionError);
    } finally {
      await dispose();
    }
  });

  it('list-users fails on a condition it cannot evaluate on any path, though another path grants', async () => {
    const model = `model
  schema 1.1
type user
type folder
  relations
    define viewer: [user]
type doc
  relations
    define parent: [folder with not_expired]
    define viewer: [user] or viewer from parent

condition not_expired(current_time: timestamp, expires_at: timestamp) {
  current_time < expires_at
}
`;
    const { engine, dispose } = await database.engine(model, { memory: false });
    try {
      await engine.write(
        [
          { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
          { user: 'user:anne', relation: 'viewer', object: 'folder:f' },
          { user: 'folder:f', relation: 'parent', object: 'doc:1', condition: until('2030-01-01T00:00:00Z') },
        ],
        [],
      );
      // Check answers yes: one path grants, the other's condition does not matter then.
      expect(await engine.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1' })).toBe(true);
      for (const filter of [{ type: 'user' }, { type: 'folder', relation: 'viewer' }]) {
        await expect(engine.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [filter] })).rejects.toThrow(
          "tuple 'doc:1#parent@folder:f' is missing context parameters '[current_time]'",
        );
      }
      const context = { current_time: '2026-01-01T00:00:00Z' };
      expect(await engine.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [{ type: 'user' }], context })).toEqual([
        'user:anne',
      ]);
      expect(
        await engine.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [{ type: 'folder', relation: 'viewer' }], context }),
      ).toEqual(['folder:f#viewer']);
    } finally {
      await dispose();
    }
  });

  describe('after a model change, tuples the new model does not admit are ignored', () => {
    const modelWith = (viewer: string) => `model
  schema 1.1
type user
type employee
type doc
  relations
    define viewer: ${viewer}

condition not_expired(current_time: timestamp, expires_at: timestamp) {
  current_time < expires_at
}

condition from_network(ip: ipaddress, cidr: string) {
  ip.in_cidr(cidr)
}
`;
    for (const memory of [false, true]) {
      it(memory ? 'from memory' : 'reading the table', async () => {
        const { engine, dispose, schema } = await database.engine(modelWith('[user, user with not_expired]'), { memory: false });
        const replicas: { engine: { close(): void }; db: { close(): Promise<void> } }[] = [];
        const under = async (viewer: string) => {
          const replica = await database.replica(schema, modelWith(viewer), { memory });
          replicas.push(replica);
          if (memory) await replica.engine.load();
          return replica.engine;
        };
        try {
          await engine.write(
            [
              { user: 'user:anne', relation: 'viewer', object: 'doc:1', condition: until('2030-01-01T00:00:00Z') },
              { user: 'user:bob', relation: 'viewer', object: 'doc:1' },
            ],
            [],
          );
          const ip = { ip: '10.0.0.1' };
          // Another condition only: anne's tuple (not_expired) and bob's (none) are no longer read; nothing to evaluate.
          const other = await under('[user with from_network]');
          expect(
            await other.batchCheck(['user:anne', 'user:bob'].map((user) => ({ user, relation: 'viewer', object: 'doc:1', context: ip }))),
          ).toEqual([false, false]);
          expect(await other.listObjects('user:anne', 'viewer', 'doc')).toEqual([]);
          expect(await other.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [{ type: 'user' }] })).toEqual([]);
          // No condition at all: bob's tuple counts, anne's conditioned one does not (and needs no context).
          const plain = await under('[user]');
          expect(await plain.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1' })).toBe(false);
          expect(await plain.check({ user: 'user:bob', relation: 'viewer', object: 'doc:1' })).toBe(true);
          expect(await plain.listUsers({ object: 'doc:1', relation: 'viewer', userFilters: [{ type: 'user' }] })).toEqual(['user:bob']);
          expect(await plain.listObjects('user:anne', 'viewer', 'doc')).toEqual([]);
          // Another type: neither counts.
          const employees = await under('[employee]');
          expect(await employees.check({ user: 'user:bob', relation: 'viewer', object: 'doc:1' })).toBe(false);
          // The condition admitted again: anne's tuple counts while it holds.
          const again = await under('[user with not_expired]');
          const now = { current_time: '2026-01-01T00:00:00Z' };
          expect(await again.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1', context: now })).toBe(true);
          expect(await again.check({ user: 'user:bob', relation: 'viewer', object: 'doc:1', context: now })).toBe(false);
        } finally {
          for (const r of replicas) {
            r.engine.close();
            await r.db.close();
          }
          await dispose();
        }
      });
    }
  });
});

describe('conditioned tuples are written as the model says', () => {
  it('refuses an unknown condition, a condition the relation does not take, a missing one and an unknown parameter', async () => {
    const { engine, dispose } = await database.engine(MODEL, { memory: false });
    try {
      const write = (t: object) => engine.write([{ user: 'user:anne', object: 'doc:1', ...t } as never], []);
      await expect(write({ relation: 'viewer', condition: { name: 'nope' } })).rejects.toThrow(
        "condition 'nope' is not defined in the model",
      );
      await expect(write({ relation: 'owner', condition: until('2030-01-01T00:00:00Z') })).rejects.toThrow('doc#owner accepts only [user]');
      await expect(write({ relation: 'viewer' })).rejects.toThrow('accepts only [user with not_expired, user:* with from_network]');
      await expect(write({ relation: 'viewer', condition: { name: 'not_expired', context: { expires: 'x' } } })).rejects.toThrow(
        "condition 'not_expired' has no parameter 'expires'",
      );
      // Both shapes are admitted where the model names both; the condition is not part of the tuple's identity.
      await write({ relation: 'either' });
      await expect(write({ relation: 'either', condition: until('2030-01-01T00:00:00Z') })).rejects.toBeInstanceOf(TupleConflictError);
    } finally {
      await dispose();
    }
  });

  it('refuses a model whose condition does not compile or is not a bool', () => {
    const model = (body: string) =>
      `model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user with c]\n\ncondition c(x: int) {\n  ${body}\n}\n`;
    expect(() => TypeSystem.fromDsl(model('y > 1'))).toThrow(/condition c: Unknown variable: y/);
    expect(() => TypeSystem.fromDsl(model('x + 1'))).toThrow('condition c: expected a bool expression, got int');
    expect(TypeSystem.fromDsl(model('x > 1')).conditions.size).toBe(1);
  });
});

describe('persistence', () => {
  it('keeps the condition in the table and in memory, through writes, reads and deletes', async () => {
    const { engine, dispose, schema } = await database.engine(MODEL);
    try {
      await engine.load();
      const tuple = { user: 'user:anne', relation: 'viewer', object: 'doc:1', condition: until('2030-01-01T00:00:00Z') };
      await engine.write(
        [
          tuple,
          { user: 'user:*', relation: 'viewer', object: 'doc:2', condition: { name: 'from_network', context: { cidr: '10.0.0.0/8' } } },
        ],
        [],
      );
      expect(await engine.readTuples({ object: 'doc:1' })).toEqual([tuple]);
      expect(engine.inMemory!.rows().find((r) => r.object_id === '1')).toMatchObject({ condition_name: 'not_expired' });
      const ask = (current_time: string, ip = '10.0.0.1') =>
        engine.batchCheck([
          { user: 'user:anne', relation: 'viewer', object: 'doc:1', context: { current_time } },
          { user: 'user:zed', relation: 'viewer', object: 'doc:2', context: { ip } },
        ]);
      expect(await ask('2029-01-01T00:00:00Z')).toEqual([true, true]);
      expect(await ask('2031-01-01T00:00:00Z', '11.0.0.1')).toEqual([false, false]);
      await engine.write([], [{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }]);
      expect(await engine.readTuples({ object: 'doc:1' })).toEqual([]);
      expect(await ask('2029-01-01T00:00:00Z')).toEqual([false, true]);
      // Another replica loads the conditioned tuples from the table.
      const replica = await database.replica(schema, MODEL);
      await replica.engine.load();
      expect(await replica.engine.check({ user: 'user:zed', relation: 'viewer', object: 'doc:2', context: { ip: '10.9.9.9' } })).toBe(true);
      replica.engine.close();
    } finally {
      await dispose();
    }
  });
});

describe('ipaddress', () => {
  it('answers in_cidr for IPv4 and IPv6, and refuses a malformed block', () => {
    expect(new IPAddress('10.1.2.3').inCidr('10.0.0.0/8')).toBe(true);
    expect(new IPAddress('11.1.2.3').inCidr('10.0.0.0/8')).toBe(false);
    expect(new IPAddress('2001:db8::1').inCidr('2001:db8::/32')).toBe(true);
    expect(new IPAddress('10.1.2.3').inCidr('2001:db8::/32')).toBe(false);
    expect(() => new IPAddress('10.1.2.3').inCidr('10.0.0.0/33')).toThrow("invalid CIDR '10.0.0.0/33'");
    expect(() => new IPAddress('10.1.2.3').inCidr('10.0.0.0')).toThrow('invalid CIDR');
  });
});
