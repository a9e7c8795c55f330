import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConflictError, InputError, UnavailableError } from '@platform/errors';
import { createTestDatabase, eventually } from '@platform/testing';
import { openDatabase, Outbox, outboxMigration, StatementColumn, type Database, type EffectContext, type EffectHandler } from './index';

// The outbox against real Postgres, with a remote side that is a set of strings which can fail on demand.
describe('Outbox', () => {
  let db: Database;
  let drop: () => Promise<void>;
  const remote = new Set<string>();
  const state = { down: false, refuse: false, applied: [] as string[] };
  /** Adds or removes names on the remote side; idempotent, as every effect must be. */
  const names: EffectHandler<{ add?: string[]; remove?: string[] }> = {
    async apply(p) {
      if (state.down) throw new UnavailableError('remote is down');
      if (state.refuse) throw new InputError('remote refuses this');
      for (const n of p.remove ?? []) remote.delete(n);
      for (const n of p.add ?? []) remote.add(n);
      state.applied.push(JSON.stringify(p));
    },
    invert: (p) => ({ add: p.remove, remove: p.add }),
  };
  const boxes: Outbox[] = [];
  /** An outbox as one process (a replica) has it: on Postgres it holds its lock until stopped. */
  const outbox = (opts: { leaseMs?: number } = {}) => {
    const box = new Outbox(db, { names }, { leaseMs: opts.leaseMs ?? 60_000, relayIntervalMs: 50 });
    boxes.push(box);
    return box;
  };
  /** An outbox whose `names` effect waits until `release` is called, as one on a slow remote would. */
  const heldOutbox = () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const slow: EffectHandler<{ add?: string[]; remove?: string[] }> = {
      ...names,
      apply: async (p, call) => {
        await held;
        await names.apply(p, call);
      },
    };
    const box = new Outbox(db, { names: slow }, { leaseMs: 60_000, relayIntervalMs: 50 });
    boxes.push(box);
    return { box, release };
  };
  const rows = async () => (await db.table('things').orderBy('name').pluck('name')) as string[];
  const addThing = (box: Outbox, name: string, undo = true) =>
    box.run(
      async (trx, stage) => {
        await db.table('things', trx).insert({ name });
        stage('names', { add: [name] });
        return name;
      },
      undo ? { undo: (trx) => db.table('things', trx).where({ name }).delete() } : {},
    );

  beforeAll(async () => {
    const t = await createTestDatabase();
    drop = t.drop;
    db = await openDatabase({ url: t.url, dataDir: '', schema: 'outbox_test' });
    await db.migrate([
      outboxMigration('20260101000000_outbox'),
      {
        name: '20260101000001_things',
        up: (knex, schema) => knex.schema.withSchema(schema).createTable('things', (t) => t.text('name').primary()),
        down: (knex, schema) => knex.schema.withSchema(schema).dropTable('things'),
      },
    ]);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });
  afterEach(async () => {
    state.down = false;
    state.refuse = false;
    await Promise.all(boxes.splice(0).map((b) => b.stop()));
  });

  it('applies the effects right after the commit and keeps no entry', async () => {
    const box = outbox();
    expect(await addThing(box, 'a')).toBe('a');
    expect(remote.has('a')).toBe(true);
    expect(await box.pending()).toBe(0);
  });

  it('keeps no entry of changes made at once, each gone when its change answers, in fewer deletes than changes', async () => {
    const box = outbox();
    const deletes: string[] = [];
    const seen = (q: { sql: string }) => void (/^delete from "outbox_test"."outbox"/.test(q.sql) && deletes.push(q.sql));
    db.knex.on('query', seen);
    try {
      const names = Array.from({ length: 12 }, (_, i) => `many-${i}`);
      await Promise.all(
        names.map(async (name) => {
          await addThing(box, name);
          // This change's entry is gone by the time it answers, whichever delete took it.
          const [{ n }] = await db
            .table('outbox')
            .whereRaw(`effects::text like ?`, [`%"${name}"%`])
            .count({ n: '*' });
          expect(Number(n)).toBe(0);
        }),
      );
      for (const name of names) expect(remote.has(name)).toBe(true);
      expect(await box.pending()).toBe(0);
      expect(deletes.length).toBeGreaterThan(0);
      expect(deletes.length).toBeLessThan(names.length);
    } finally {
      db.knex.off('query', seen);
    }
  });

  it('commits nothing, rows or effects, when the change itself fails', async () => {
    const box = outbox();
    await expect(
      box.run(async (trx, stage) => {
        await db.table('things', trx).insert({ name: 'b' });
        stage('names', { add: ['b'] });
        throw new ConflictError('no');
      }),
    ).rejects.toThrow('no');
    expect(await rows()).not.toContain('b');
    expect(remote.has('b')).toBe(false);
    expect(await box.pending()).toBe(0);
  });

  it('puts the rows back and takes the effects back when an effect fails and the change can be undone', async () => {
    const box = outbox();
    state.down = true;
    await expect(addThing(box, 'c')).rejects.toThrow('remote is down');
    expect(await rows()).not.toContain('c');
    // The inverse could not be applied either (the remote is still down): it waits for the relay.
    expect(await box.pending()).toBe(1);
    state.down = false;
    await new Promise((r) => setTimeout(r, 150)); // its backoff
    expect(await box.relay()).toBe(1);
    expect(remote.has('c')).toBe(false);
    expect(await box.pending()).toBe(0);
  });

  it('does not undo an effect the remote refused for good, and drops it', async () => {
    const box = outbox();
    state.refuse = true;
    await expect(addThing(box, 'd')).rejects.toThrow('remote refuses');
    expect(await rows()).not.toContain('d');
    expect(await box.pending()).toBe(0);
  });

  it('keeps a committed change without an undo, answers its result, and lets the relay complete it', async () => {
    const box = outbox();
    state.down = true;
    expect(await addThing(box, 'e', false)).toBe('e');
    expect(await rows()).toContain('e');
    expect(remote.has('e')).toBe(false);
    state.down = false;
    box.start();
    try {
      await eventually(async () => remote.has('e'), 10_000);
      expect(await box.pending()).toBe(0);
    } finally {
      await box.stop();
    }
  });

  describe('a change written by one statement', () => {
    /** Inserts a thing and its entry in one statement; the entry's payload takes the name from the statement's row. */
    const addInOne = (box: Outbox, name: string, undo = true) =>
      box.runInOne(
        async (entry) => {
          const { rows: written } = await db.knex.raw<{ rows: { name: string }[] }>(
            `with thing as (insert into outbox_test.things (name) select ? where ? <> 'nobody' returning name), entry as (?) select thing.name, ? from thing, entry`,
            [
              name,
              name,
              entry.insert('thing', [
                { kind: 'names', payload: { add: StatementColumn.of('thing.name'), note: { as: ['json'] }, left: undefined } },
              ]),
              entry.columns,
            ],
          );
          return { result: written[0]?.name, row: written[0] };
        },
        undo ? { undo: (trx) => db.table('things', trx).where({ name }).delete() } : {},
      );
    const payloads = (handler: EffectHandler<{ add?: string[] | string }>): EffectHandler => ({
      ...handler,
      // The payload's `add` is the statement's column (one name), as the relay too reads it from the stored entry.
      apply: (p: { add: string }, call, applied) => handler.apply({ add: [p.add] }, call, applied),
    });
    const inOne = () => {
      const box = new Outbox(db, { names: payloads(names) }, { leaseMs: 60_000, relayIntervalMs: 50 });
      boxes.push(box);
      return box;
    };

    it('writes the rows and the entry in one statement, applies the effects, and keeps no entry', async () => {
      const box = inOne();
      await addInOne(box, 'one-first'); // the first takes the holder's lock (a statement of its own, once)
      const statements: string[] = [];
      const seen = (q: { sql: string }) => void statements.push(q.sql.split(' ')[0].toLowerCase());
      db.knex.on('query', seen);
      try {
        expect(await addInOne(box, 'one-a')).toBe('one-a');
      } finally {
        db.knex.off('query', seen);
      }
      expect(remote.has('one-a')).toBe(true);
      expect(await box.pending()).toBe(0);
      // No transaction around it: the statement, then the entry's delete.
      expect(statements).toEqual(['with', 'delete']);
    });

    it('writes no entry when the statement writes nothing', async () => {
      const box = inOne();
      expect(await addInOne(box, 'nobody')).toBeUndefined();
      expect(await box.pending()).toBe(0);
      expect(remote.has('nobody')).toBe(false);
    });

    it('puts the rows back and takes the effects back when an effect fails', async () => {
      const box = inOne();
      state.down = true;
      await expect(addInOne(box, 'one-c')).rejects.toThrow('remote is down');
      expect(await rows()).not.toContain('one-c');
      expect(await box.pending()).toBe(1);
      state.down = false;
      await new Promise((r) => setTimeout(r, 150)); // its backoff
      expect(await box.relay()).toBe(1);
      expect(remote.has('one-c')).toBe(false);
    });

    it('keeps a committed change without an undo and lets the relay apply the entry as the statement stored it', async () => {
      const box = inOne();
      state.down = true;
      expect(await addInOne(box, 'one-e', false)).toBe('one-e');
      const [stored] = await db.table('outbox').pluck('effects');
      expect(stored).toEqual([{ kind: 'names', payload: { add: 'one-e', note: { as: ['json'] } } }]);
      state.down = false;
      await new Promise((r) => setTimeout(r, 150));
      expect(await box.relay()).toBe(1);
      expect(remote.has('one-e')).toBe(true);
    });

    it('refuses an effect with no handler, or a payload column that is not one, before writing anything', async () => {
      const box = inOne();
      await expect(
        box.runInOne(async (entry) => ({ result: entry.insert('thing', [{ kind: 'nothing', payload: {} }]), row: undefined })),
      ).rejects.toThrow('no outbox handler for nothing');
      expect(() => StatementColumn.of('thing.name; drop table things')).toThrow('not a column');
      await expect(
        box.runInOne(async (entry) => ({ result: entry.insert('thing; drop table things', []), row: undefined })),
      ).rejects.toThrow('not a list of CTE names');
      expect(await box.pending()).toBe(0);
    });

    it('writes no entry for a change whose statement did everything itself, and answers its row', async () => {
      const box = inOne();
      const name = await box.runInOne(async (entry) => {
        const { rows } = await db.knex.raw<{ rows: { name: string; outbox_entry_id: unknown }[] }>(
          `with thing as (insert into outbox_test.things (name) values (?) returning name), entry as (?) select thing.name, ? from thing, entry`,
          ['no-effects', entry.insert('thing', []), entry.columns],
        );
        expect(rows[0].outbox_entry_id).toBeNull();
        return { result: rows[0].name, row: rows[0] };
      });
      expect(name).toBe('no-effects');
      expect(Number((await db.table('things').where({ name: 'no-effects' }).count({ n: '*' }))[0].n)).toBe(1);
      expect(await box.pending()).toBe(0);
    });
  });

  it('tells an effect applied right after its change committed from one the relay applies later, and gives it the payload as stored', async () => {
    const seen: string[] = [];
    const told: EffectHandler<{ at: unknown }> = {
      apply: async (p, _call, applied) => {
        if (state.down) throw new UnavailableError('remote is down');
        seen.push(`${applied?.afterCommit ? 'after commit' : 'later'} ${JSON.stringify(p)}`);
      },
    };
    const box = new Outbox(db, { told }, { leaseMs: 60_000, relayIntervalMs: 50 });
    boxes.push(box);
    const at = new Date(0);
    await box.run(async (_trx, stage) => stage('told', { at }));
    state.down = true;
    await box.run(async (_trx, stage) => stage('told', { at }));
    state.down = false;
    // After its backoff, the relay applies it.
    await eventually(async () => (await box.relay()) === 1, 10_000);
    expect(await box.pending()).toBe(0);
    const stored = JSON.stringify({ at: at.toISOString() });
    expect(seen).toEqual([`after commit ${stored}`, `later ${stored}`]);
  });

  it('answers a detached change once it committed, before its effects are applied, and applies them after', async () => {
    const box = outbox();
    const { box: slowBox, release } = heldOutbox();
    const answered = await slowBox.run(
      async (trx, stage) => {
        await db.table('things', trx).insert({ name: 'detached' });
        stage('names', { add: ['detached'] });
        return 'detached';
      },
      { detach: true },
    );
    expect(answered).toBe('detached');
    expect(remote.has('detached')).toBe(false);
    release();
    await eventually(async () => remote.has('detached'), 10_000);
    await eventually(async () => (await box.pending()) === 0, 10_000);
  });

  it('waits, when stopped, for a detached effect still applying, then refuses changes and holds no connection', async () => {
    const { box: slowBox, release } = heldOutbox();
    await slowBox.run(
      async (trx, stage) => {
        await db.table('things', trx).insert({ name: 'at-stop' });
        stage('names', { add: ['at-stop'] });
      },
      { detach: true },
    );
    let stopped = false;
    const stopping = slowBox.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(remote.has('at-stop')).toBe(true);
    await expect(addThing(slowBox, 'after-stop')).rejects.toThrow(UnavailableError);
    expect(await rows()).not.toContain('after-stop');
    // The holder's connection went back to the pool and no change took it again: the database can close.
    expect((db.knex.client as any).pool.numUsed()).toBe(0);
  });

  it("leaves a live replica's entry to it until its lease runs out, and only then relays it", async () => {
    const live = outbox({ leaseMs: 1_000 });
    state.down = true;
    await addThing(live, 'f', false);
    state.down = false;
    await db.table('outbox').update({ lease_until: new Date(Date.now() + 1_000), attempts: 0 });
    const other = outbox();
    expect(await other.relay()).toBe(0); // still leased: a request of that replica may be applying it right now
    expect(remote.has('f')).toBe(false);
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await other.relay()).toBe(1);
    expect(remote.has('f')).toBe(true);
    // Applied once more by mistake, it changes nothing.
    await names.apply({ add: ['f'] }, {});
    expect([...remote].filter((n) => n === 'f')).toHaveLength(1);
  });

  it('takes over at once, and applies once, the entries of a process that died after its commit', async () => {
    // A process commits, then dies before applying: its entry stays leased to it for a long while.
    const doomed = outbox({ leaseMs: 600_000 });
    state.down = true;
    await addThing(doomed, 'f2', false);
    state.down = false;
    await db.table('outbox').update({ lease_until: new Date(Date.now() + 600_000), attempts: 0 });
    const next = outbox();
    expect(await next.relay()).toBe(0); // alive: its request may still be applying it
    // The process dies: Postgres ends its sessions, and the locks they held with them.
    const killed = await db.knex.raw(
      `select pg_terminate_backend(pid) as done from pg_locks
        where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())
          and classid = ? and objsubid = 2
          and objid::bigint in (select split_part(lease_owner, ':', 1)::bigint from ??.outbox)`,
      [0x4f424f58, db.schema],
    );
    expect(killed.rows).toHaveLength(1);
    state.applied.length = 0;
    expect(await next.relay()).toBe(1);
    expect(remote.has('f2')).toBe(true);
    expect(state.applied).toEqual([JSON.stringify({ add: ['f2'] })]);
    expect(await next.pending()).toBe(0);
    expect(await next.relay()).toBe(0);
  });

  it('lets two relays share the work without applying an entry twice', async () => {
    state.down = true;
    const box = outbox();
    for (const n of ['g1', 'g2', 'g3', 'g4']) await addThing(box, n, false);
    state.down = false;
    await db.table('outbox').update({ lease_until: new Date(0) });
    state.applied.length = 0;
    const [a, b] = await Promise.all([outbox().relay(), outbox().relay()]);
    expect(a + b).toBe(4);
    expect(state.applied).toHaveLength(4);
  });

  it('applies the effects right after the commit for the call the change serves, and relayed ones for none', async () => {
    const calls: EffectContext[] = [];
    const seen: EffectHandler<object> = {
      async apply(_p, call) {
        calls.push(call);
        if (state.down) throw new UnavailableError('remote is down');
      },
    };
    const box = new Outbox(db, { seen }, { leaseMs: 60_000, relayIntervalMs: 50 });
    boxes.push(box);
    const call = { requestId: 'req-1', deadline: new Date(Date.now() + 5_000), signal: new AbortController().signal };
    await box.run(async (_trx, stage) => stage('seen', {}), { call });
    expect(calls).toEqual([call]);

    state.down = true;
    await box.run(async (_trx, stage) => stage('seen', {}), { call });
    state.down = false;
    await eventually(async () => (await box.relay()) === 1, 10_000);
    expect(calls.slice(1)).toEqual([call, {}]);
    expect(await box.pending()).toBe(0);
  });
});

describe('Outbox on the embedded database', () => {
  let dataDir: string;
  let db: Database;
  const remote: string[] = [];
  const state = { down: false };
  const names: EffectHandler<{ add: string[] }> = {
    async apply(p) {
      if (state.down) throw new UnavailableError('remote is down');
      remote.push(...p.add);
    },
  };
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-embedded-'));
    db = await openDatabase({ dataDir, schema: 'outbox_embedded' });
    await db.migrate([outboxMigration('20260101000000_outbox')]);
  });
  afterAll(async () => {
    await db?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps no entry of changes made at once, in fewer deletes than changes', async () => {
    const box = new Outbox(db, { names }, { leaseMs: 600_000, relayIntervalMs: 60_000 });
    const deletes: string[] = [];
    const seen = (q: { sql: string }) => void (/^delete from "outbox_embedded"."outbox"/.test(q.sql) && deletes.push(q.sql));
    db.knex.on('query', seen);
    try {
      const added = Array.from({ length: 12 }, (_, i) => `at-once-${i}`);
      await Promise.all(added.map((name) => box.run(async (_trx, stage) => stage('names', { add: [name] }))));
      expect(remote).toEqual(expect.arrayContaining(added));
      expect(await box.pending()).toBe(0);
      expect(deletes.length).toBeGreaterThan(0);
      expect(deletes.length).toBeLessThan(added.length);
    } finally {
      db.knex.off('query', seen);
      await box.stop();
      remote.splice(0);
    }
  });

  it("takes over at start-up what an earlier process left under lease, and leaves this process's own leases alone", async () => {
    // Left by the process that held DATA_DIR before this one (its holder id differs), and by a version before holders.
    const future = new Date(Date.now() + 600_000);
    await db.table('outbox').insert([
      {
        effects: JSON.stringify([{ kind: 'names', payload: { add: ['left'] } }]),
        lease_owner: '12345:0123456789abcdef',
        lease_until: future,
      },
      {
        effects: JSON.stringify([{ kind: 'names', payload: { add: ['older'] } }]),
        lease_owner: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
        lease_until: future,
      },
    ]);
    const box = new Outbox(db, { names }, { leaseMs: 600_000, relayIntervalMs: 60_000 });
    try {
      // This process's own change, whose effect failed: leased to this process for its backoff.
      state.down = true;
      await box.run(async (_trx, stage) => stage('names', { add: ['mine'] }));
      state.down = false;
      await db
        .table('outbox')
        .where('lease_owner', 'not like', '12345:%')
        .where('lease_owner', 'like', '%:%')
        .update({ lease_until: future });
      expect(await box.relay()).toBe(2);
      expect(remote).toEqual(['left', 'older']);
      expect(await box.pending()).toBe(1);
    } finally {
      await box.stop();
    }
  });
});
