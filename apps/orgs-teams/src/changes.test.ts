import { EventEmitter } from 'node:events';
import { ACCOUNTS_CHANGED, InProcessBus, ORGS_CHANGED, ORGS_TEAMS_OTHER_CHANGED, SIGNIN_CHANGED } from '@platform/bus';
import type { Database } from '@platform/db';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import type { ServiceBinding } from '@platform/service-kit';
import { announcedWrites, announcingChanges, ChangeAnnouncer, changed, watchStatements } from './changes';

// How orgs-teams' writes announce themselves: what a call recorded, everything when it wrote a kept table without
// recording, nothing when nothing kept changed; reads only what they wrote (sign-in state: its own notice); passes
// outside calls announce the same way.

/** A knex as the collector sees it: the statements a call runs, told through its 'query' event. */
const knex = new EventEmitter();
watchStatements({ knex } as unknown as Database);
const run = (sql: string) => knex.emit('query', { sql });

type Methods = { getThing: unknown; changeThing: unknown };

async function setUp(handlers: Record<keyof Methods, () => Promise<unknown>>) {
  const bus = new InProcessBus();
  const heard: string[] = [];
  for (const subject of [ACCOUNTS_CHANGED, ORGS_CHANGED])
    await bus.listen(subject, (_subject, payload) => void heard.push(`${subject} ${JSON.stringify(payload)}`));
  const signins: string[] = [];
  await bus.listen(SIGNIN_CHANGED, (_subject, payload) => void signins.push(JSON.stringify(payload)));
  const warned: string[] = [];
  const evicted: string[] = [];
  const announcer = new ChangeAnnouncer(
    'identity',
    bus,
    { warn: ((_fields: unknown, message: string) => void warned.push(message)) as never },
    {
      evict: (id) => evicted.push(`org ${id}`),
      edited: (rows) => evicted.push(...rows.map((r) => `org ${r.id} kept at v${r.version}`)),
      clear: () => evicted.push('all'),
    },
  );
  const binding = { definition: {}, handlers } as unknown as ServiceBinding<Methods>;
  const { handlers: served } = announcedWrites(binding, ['getThing'], announcer);
  const call = (name: keyof Methods) => (served[name] as unknown as (req: unknown, ctx: unknown) => Promise<unknown>)({}, {});
  return { announcer, heard, signins, warned, evicted, call };
}

describe("orgs-teams' change announcements", () => {
  it('announces a write method not declared a read with what it recorded, before it answers; a read its sign-in state alone', async () => {
    let heardBeforeAnswer: string[] = [];
    const { heard, signins, evicted, call } = await setUp({
      getThing: async () => {
        changed.signin([1]);
        run('update "identity"."accounts" set "last_login_at" = now() where "id" = 1');
        return 'read';
      },
      changeThing: async () => {
        changed.accounts([3]);
        run('update "identity"."accounts" set "full_name" = $1 where "id" = $2');
        changed.orgs([7, '7']);
        run('insert into "identity"."teams" ("org_id", "name") values ($1, $2) returning *');
        return 'written';
      },
    });
    expect(await call('getThing')).toBe('read');
    expect(heard).toEqual([]);
    expect(signins).toEqual(['{"userIds":[1]}']);
    const answer = call('changeThing').then((v) => ((heardBeforeAnswer = [...heard]), v));
    expect(await answer).toBe('written');
    expect(heardBeforeAnswer).toEqual([`${ACCOUNTS_CHANGED} {"userIds":[3]}`, `${ORGS_CHANGED} {"orgIds":[7]}`]);
    expect(evicted).toEqual(['org 7']);
  });

  it('announces everything for a write of a table readers keep that recorded nothing of the kind it calls for', async () => {
    const writes = [
      // Nothing recorded at all.
      () => run('delete from "identity"."access_tokens" where "uid" = $1'),
      // An organization recorded, but a token's row is an account's.
      () => (changed.orgs([7]), run('delete from "identity"."access_tokens" where "uid" = $1')),
      // A table no one classified, and a statement whose table cannot be told.
      () => run('insert into "identity"."new_table" ("id") values ($1)'),
      () => run('do $$ begin perform 1; end $$'),
    ];
    for (const write of writes) {
      const { heard, evicted, call } = await setUp({ getThing: async () => undefined, changeThing: async () => write() });
      await call('changeThing');
      expect(heard).toEqual([`${ACCOUNTS_CHANGED} {"userIds":[],"all":true}`, `${ORGS_CHANGED} {"orgIds":[],"all":true}`]);
      expect(evicted).toEqual(['all']);
    }
  });

  it("says when an organization's teams or members alone changed, by the tables written, and then leaves its row kept", async () => {
    const cases: [string, string[], string][] = [
      ['a team made', ['insert into "identity"."teams" ("org_id", "name") values ($1, $2) returning *'], ',"only":"teams"'],
      [
        'a member added to a team and the organization',
        [
          'with t as (insert into "identity"."team_users" ("team_id", "uid") values ($1, $2)) insert into "identity"."org_users" ("org_id", "uid") values ($3, $4)',
        ],
        ',"only":"members"',
      ],
      [
        'a team deleted with its members',
        ['delete from "identity"."team_users" where "team_id" = $1', 'delete from "identity"."teams" where "id" = $1'],
        ',"only":"teams"',
      ],
      ['the organization renamed', ['update "identity"."accounts" set "login" = $1 where "id" = $2'], ''],
      [
        'a team made and the organization’s avatar changed',
        [
          'insert into "identity"."teams" ("org_id", "name") values ($1, $2)',
          'update "identity"."org_avatars" set "data" = $1 where "org_id" = $2',
        ],
        '',
      ],
      [
        'a member added and the organization renamed',
        [
          'insert into "identity"."org_users" ("org_id", "uid") values ($1, $2)',
          'update "identity"."accounts" set "full_name" = $1 where "id" = $2',
        ],
        '',
      ],
    ];
    for (const [what, statements, only] of cases) {
      const { heard, evicted, call } = await setUp({
        getThing: async () => undefined,
        changeThing: async () => {
          changed.orgs([7]);
          for (const sql of statements) run(sql);
        },
      });
      await call('changeThing');
      expect([what, heard]).toEqual([what, [`${ORGS_CHANGED} {"orgIds":[7]${only}}`]]);
      // This replica's organization rows: only a change of a row evicts it.
      expect([what, evicted]).toEqual([what, only ? [] : ['org 7']]);
    }
  });

  it("carries an edited organization's row when its row alone changed, and not when anything else of it did", async () => {
    // Part of the Organization message: what the notice carries is what was recorded.
    const row = { id: 7, username: 'acme', description: 'new', version: 3 } as orgsTeamsOrgsV1.Organization;
    const edit = 'update "identity"."accounts" set "description" = $1, "version" = version + 1 where "id" = $2 returning *';
    const cases: [string, () => void, string][] = [
      ['an edit of its fields', () => (changed.orgs([7]), run(edit), changed.orgRow(row)), `,"rows":[${JSON.stringify(row)}]`],
      [
        'an edit beside a member added',
        () => (
          changed.orgs([7]),
          run(edit),
          changed.orgRow(row),
          run('insert into "identity"."org_users" ("org_id", "uid") values ($1, $2)')
        ),
        '',
      ],
      // Recorded again after its row was: what the row says may no longer be the organization's.
      ['an edit then another change of it', () => (changed.orgs([7]), run(edit), changed.orgRow(row), changed.orgs([7])), ''],
    ];
    for (const [what, change, rows] of cases) {
      const { heard, evicted, call } = await setUp({ getThing: async () => undefined, changeThing: async () => change() });
      await call('changeThing');
      expect([what, heard.filter((h) => h.startsWith(ORGS_CHANGED))]).toEqual([what, [`${ORGS_CHANGED} {"orgIds":[7]${rows}}`]]);
      // This replica's row: kept as the edit left it when the notice brings it, else forgotten.
      expect([what, evicted]).toEqual([what, [rows ? 'org 7 kept at v3' : 'org 7']]);
    }
    // A row given without its organization recorded first is not taken: the write recorded nothing, so everything goes.
    const { heard, call } = await setUp({ getThing: async () => undefined, changeThing: async () => (run(edit), changed.orgRow(row)) });
    await call('changeThing');
    expect(heard.filter((h) => h.startsWith(ORGS_CHANGED))).toEqual([`${ORGS_CHANGED} {"orgIds":[],"all":true}`]);
  });

  it('announces a failed write too, and nothing when nothing readers keep changed', async () => {
    const failing = await setUp({
      getThing: async () => undefined,
      changeThing: async () => {
        changed.orgs([7]);
        run('delete from "identity"."teams" where "id" = $1 returning "org_id"');
        throw new Error('refused after writing');
      },
    });
    await expect(failing.call('changeThing')).rejects.toThrow('refused after writing');
    expect(failing.heard).toEqual([`${ORGS_CHANGED} {"orgIds":[7],"only":"teams"}`]);

    const quiet = [
      // Refused before writing anything.
      async () => {
        run('select * from "identity"."accounts" where "id" = $1 for update');
        throw new Error('not found');
      },
      // Rows no reader keeps, transaction control, another service's schema (its owner announces it).
      async () => {
        run('BEGIN;');
        run('insert into "identity"."email_verifications" ("uid") values ($1)');
        run('delete from "identity"."outbox" where "id" = $1');
        run('update "authz"."tuples" set "x" = 1');
        run('COMMIT;');
      },
    ];
    for (const write of quiet) {
      const { heard, signins, call } = await setUp({ getThing: async () => undefined, changeThing: write });
      await call('changeThing').catch(() => undefined);
      expect(heard).toEqual([]);
      expect(signins).toEqual([]);
    }
  });

  it("announces a read's writes of sign-in state with the sign-in notice alone, and a read's unrecorded write as everything", async () => {
    // A session's last use and a code spent: tables of sign-in state, kept whole, need no record.
    const session = await setUp({
      getThing: async () => {
        run('update "identity"."sessions" set "last_used_at" = now() where "id" = $1');
        run('update "identity"."recovery_codes" set "used_at" = now() where "uid" = $1');
        throw new Error('a wrong code, after writing');
      },
      changeThing: async () => undefined,
    });
    await expect(session.call('getThing')).rejects.toThrow('a wrong code');
    expect(session.heard).toEqual([]);
    expect(session.signins).toEqual(['{"userIds":[]}']);
    // A failure counted toward a lockout writes nothing: its record alone is announced.
    const failed = await setUp({ getThing: async () => changed.signin([4]), changeThing: async () => undefined });
    await failed.call('getThing');
    expect(failed.signins).toEqual(['{"userIds":[4]}']);
    // A token's row written by a read without a record: everything, and a line saying which read.
    const unrecorded = await setUp({
      getThing: async () => run('update "identity"."access_tokens" set "scope" = $1 where "id" = $2'),
      changeThing: async () => undefined,
    });
    await unrecorded.call('getThing');
    expect(unrecorded.heard).toEqual([`${ACCOUNTS_CHANGED} {"userIds":[],"all":true}`, `${ORGS_CHANGED} {"orgIds":[],"all":true}`]);
    expect(unrecorded.signins).toEqual(['{"userIds":[]}']);
    expect(unrecorded.warned).toEqual(['a read of orgs-teams wrote without recording what it changed']);
    // A read that writes nothing sends nothing.
    const quiet = await setUp({ getThing: async () => run('select 1'), changeThing: async () => undefined });
    await quiet.call('getThing');
    expect([...quiet.heard, ...quiet.signins]).toEqual([]);
  });

  it('announces the writes no call carries the same way, and records what they do inside a call into the call', async () => {
    const { announcer, heard, call } = await setUp({
      getThing: async () => undefined,
      // An effect applied right after the call's commit runs inside it: the call announces it, once.
      changeThing: () => announcingChanges(announcer, async () => changed.accounts([5])),
    });
    await call('changeThing');
    expect(heard).toEqual([`${ACCOUNTS_CHANGED} {"userIds":[5]}`]);
    heard.length = 0;
    // A periodic pass, or an effect the relay applies: a collector of its own.
    await announcingChanges(announcer, async () => run('update "identity"."accounts" set "active" = false'));
    expect(heard).toEqual([`${ACCOUNTS_CHANGED} {"userIds":[],"all":true}`, `${ORGS_CHANGED} {"orgIds":[],"all":true}`]);
    heard.length = 0;
    // Work a call leaves running after it answered (an effect applied detached) announces on its own: started inside
    // the call, it goes on once the test has the call's answer.
    let answered!: () => void;
    const callAnswered = new Promise<void>((resolve) => (answered = resolve));
    let detached: Promise<unknown> = Promise.resolve();
    const late = await setUp({
      getThing: async () => undefined,
      changeThing: async () => {
        changed.accounts([6]);
        detached = callAnswered.then(() => announcingChanges(late.announcer, async () => changed.orgs([8])));
      },
    });
    await late.call('changeThing');
    answered();
    await detached;
    expect(late.heard).toEqual([`${ACCOUNTS_CHANGED} {"userIds":[6]}`, `${ORGS_CHANGED} {"orgIds":[8]}`]);
    // Outside any call or pass (a read's incidental write), nothing is collected or sent.
    changed.accounts([9]);
    run('update "identity"."accounts" set "last_login_at" = now()');
    expect(heard).toEqual([]);
  });

  it('announces a write of what readers keep whole (settings, avatars) with the other notice alone, and nothing for the audit trail', async () => {
    const { announcer, heard } = await setUp({ getThing: async () => undefined, changeThing: async () => undefined });
    const others: string[] = [];
    const bus = (announcer as unknown as { bus: InProcessBus }).bus;
    await bus.listen(ORGS_TEAMS_OTHER_CHANGED, (subject) => void others.push(subject));
    await announcingChanges(announcer, async () => run('insert into "identity"."site_settings" ("key") values ($1)'));
    expect(heard).toEqual([]);
    expect(others).toEqual([ORGS_TEAMS_OTHER_CHANGED]);
    await announcingChanges(announcer, async () => run('insert into "identity"."audit_events" ("id") values ($1)'));
    expect(others).toEqual([ORGS_TEAMS_OTHER_CHANGED]);
  });
});
