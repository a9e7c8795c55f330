import * as notices from './notices';
import {
  ACCOUNTS_CHANGED,
  BILLING_CHANGED,
  CLUSTERS_CHANGED,
  CONTRACTS_CHANGED,
  MARKETPLACE_CHANGED,
  METRICSPROXY_CHANGED,
  NOTICE_MERGES,
  NOTICE_NAMES,
  ORGS_CHANGED,
  ORGS_TEAMS_OTHER_CHANGED,
  SIGNIN_CHANGED,
  TUPLES_CHANGED,
  orgRowsBrought,
  orgRowsNamed,
  orgTeamsNamed,
  tupleTags,
  tuplesNamed,
  type ClustersChanged,
  type MetricsproxyChanged,
} from './notices';

// Two notices of a subject sent close together go as one (coalesced-sends.ts): every reader, whatever its version,
// must drop at least what each of the two would have made it drop.

type Names = (notice: unknown) => string[] | 'all';

/** Whether `merged` names everything `a` and `b` name, as `names` reads them. */
function covers(names: Names, merged: unknown, a: unknown, b: unknown): boolean {
  const m = names(merged);
  if (m === 'all') return true;
  const want = [names(a), names(b)];
  return want.every((w) => w !== 'all' && w.every((name) => m.includes(name)));
}

const clustersNamed: Names = (n) => {
  const c = n as ClustersChanged;
  return c.all ? 'all' : [...c.uids.map((u) => `cluster:${u}`), ...c.owners.map((o) => `owner:${o}`)];
};
const registrationsNamed: Names = (n) => {
  const c = n as MetricsproxyChanged;
  return c.all ? 'all' : c.registrations.map((r) => `${r.ownerId}/${r.clusterUid}`);
};

const tuple = (object: string, relation: string, user: string) => tupleTags({ object, relation, user });

/** Pairs of notices of each subject, and how its readers read them. */
const CASES: { subject: string; names: Names[]; pairs: [unknown, unknown][] }[] = [
  {
    subject: ACCOUNTS_CHANGED,
    names: [NOTICE_NAMES[ACCOUNTS_CHANGED]],
    pairs: [
      [{ userIds: [1, 2] }, { userIds: [2, 3] }],
      [{ userIds: [1] }, { userIds: [], all: true }],
    ],
  },
  {
    subject: ORGS_CHANGED,
    names: [NOTICE_NAMES[ORGS_CHANGED], orgRowsNamed, orgTeamsNamed],
    pairs: [
      [{ orgIds: [1] }, { orgIds: [2] }],
      [{ orgIds: [1], only: 'members' }, { orgIds: [2] }],
      [
        { orgIds: [1], only: 'members' },
        { orgIds: [2], only: 'teams' },
      ],
      [
        { orgIds: [1], only: 'members' },
        { orgIds: [2], only: 'members' },
      ],
      [{ orgIds: [7] }, { orgIds: [], all: true }],
    ],
  },
  {
    subject: SIGNIN_CHANGED,
    names: [NOTICE_NAMES[SIGNIN_CHANGED]],
    pairs: [
      [{ userIds: [4] }, { userIds: [5] }],
      [{ userIds: [4] }, { userIds: [] }],
    ],
  },
  {
    subject: TUPLES_CHANGED,
    names: [NOTICE_NAMES[TUPLES_CHANGED], tuplesNamed],
    pairs: [
      [
        { tags: tuple('team:1', 'member', 'user:3'), relations: true, orgs: [7] },
        { tags: tuple('team:2', 'maintainer', 'user:4'), relations: true, orgs: [8] },
      ],
      // One from an authz that names objects alone: the merged one drops every relation of its objects.
      [
        { tags: tuple('team:1', 'member', 'user:3'), relations: true, orgs: [7] },
        { tags: ['team:2', 'team:*', '@user:4'], orgs: [8] },
      ],
      // Without `orgs`: every organization.
      [{ tags: tuple('team:1', 'member', 'user:3'), relations: true, orgs: [7] }, { tags: tuple('role:2', 'assignee', 'team:1#member') }],
      [{ tags: tuple('team:1', 'member', 'user:3'), relations: true, orgs: [7] }, { all: true }],
      [{ tags: ['team:1'] }, {}],
    ],
  },
  {
    subject: CLUSTERS_CHANGED,
    names: [clustersNamed],
    pairs: [
      [
        { uids: ['a'], owners: ['organization:1'] },
        { uids: ['b'], owners: ['user:2'] },
      ],
      [
        { uids: ['a'], owners: [] },
        { uids: [], owners: [], all: true },
      ],
    ],
  },
  {
    subject: METRICSPROXY_CHANGED,
    names: [registrationsNamed],
    pairs: [
      [
        { registrations: [{ ownerId: 1, clusterUid: 'a' }] },
        {
          registrations: [
            { ownerId: 1, clusterUid: 'a' },
            { ownerId: 2, clusterUid: 'b' },
          ],
        },
      ],
      [{ registrations: [{ ownerId: 1, clusterUid: 'a' }] }, { registrations: [], all: true }],
    ],
  },
];

describe('notices merged', () => {
  for (const { subject, names, pairs } of CASES)
    it(`${subject}: the merged notice drops all that either would, for every reader`, () => {
      for (const [a, b] of pairs) {
        const merged = NOTICE_MERGES[subject](a, b);
        for (const read of names) {
          expect({ a, b, merged, covers: covers(read, merged, a, b) }).toMatchObject({ covers: true });
          expect(covers(read, NOTICE_MERGES[subject](b, a), b, a)).toBe(true);
        }
      }
    });

  it('keeps what a merge need not widen: two member changes stay member changes, two relation-named writes stay so', () => {
    expect(NOTICE_MERGES[ORGS_CHANGED]({ orgIds: [1], only: 'members' }, { orgIds: [2], only: 'members' })).toEqual({
      orgIds: [1, 2],
      only: 'members',
    });
    const merged = NOTICE_MERGES[TUPLES_CHANGED](
      { tags: tuple('team:1', 'member', 'user:3'), relations: true, orgs: [7] },
      { tags: tuple('team:1', 'member', 'user:4'), relations: true, orgs: [7] },
    );
    expect(merged).toEqual({ tags: expect.arrayContaining(['team:1#member', '@user:3', '@user:4']), relations: true, orgs: [7] });
    // A kept answer of another relation of the same team survives it.
    expect(tuplesNamed(merged)).not.toContain('team:1#maintainer');
  });

  it("keeps an organization's row only when every notice naming it brings one, and then the newer", () => {
    const merge = NOTICE_MERGES[ORGS_CHANGED];
    const row = (id: number, version: number) => ({ id, version, description: `v${version}` });
    expect(merge({ orgIds: [1], rows: [row(1, 2)] }, { orgIds: [1], rows: [row(1, 3)] })).toEqual({ orgIds: [1], rows: [row(1, 3)] });
    expect(merge({ orgIds: [1], rows: [row(1, 3)] }, { orgIds: [1], rows: [row(1, 2)] })).toEqual({ orgIds: [1], rows: [row(1, 3)] });
    expect(merge({ orgIds: [1], rows: [row(1, 2)] }, { orgIds: [2] })).toEqual({ orgIds: [1, 2], rows: [row(1, 2)] });
    // Named without a row by the other (another change of it, a delete): dropped, never replaced.
    expect(merge({ orgIds: [1], rows: [row(1, 2)] }, { orgIds: [1, 2] })).toEqual({ orgIds: [1, 2] });
    expect(merge({ orgIds: [1], rows: [row(1, 2)] }, { orgIds: [1], only: 'members' })).toEqual({ orgIds: [1] });
    expect(orgRowsBrought(merge({ orgIds: [1], rows: [row(1, 2)] }, { orgIds: [1], all: true }))).toEqual(new Map());
  });

  it('sends apart notices that together would name more than a message should carry', () => {
    const ids = (from: number) => Array.from({ length: 3_000 }, (_, i) => from + i);
    expect(NOTICE_MERGES[ACCOUNTS_CHANGED]({ userIds: ids(0) }, { userIds: ids(3_000) })).toBeUndefined();
    expect(NOTICE_MERGES[ACCOUNTS_CHANGED]({ userIds: ids(0) }, { userIds: ids(1_000) })).toEqual({
      userIds: ids(0).concat(ids(3_000).slice(0, 1_000)),
    });
  });

  it('merges the notices that name nothing into one, and has a merge for every subject a service sends', () => {
    for (const subject of [ORGS_TEAMS_OTHER_CHANGED, CONTRACTS_CHANGED, BILLING_CHANGED, MARKETPLACE_CHANGED])
      expect(NOTICE_MERGES[subject]({}, {})).toEqual({});
    const subjects = Object.entries(notices)
      .filter(([name]) => name.endsWith('_CHANGED'))
      .map(([, subject]) => subject as string);
    expect(subjects.length).toBeGreaterThanOrEqual(10);
    expect(subjects.filter((subject) => !NOTICE_MERGES[subject])).toEqual([]);
  });
});
