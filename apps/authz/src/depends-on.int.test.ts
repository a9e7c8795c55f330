import { tupleTags, tuplesNamed, type TuplesChanged } from '@platform/bus';
import { Authorization } from './authorization';
import type { Tuple } from './engine';
import { recordingReads } from './engine/recorded';
import { openEngineDatabase } from './engine/test/engine-db';
import { noticeOf } from './tuples-changed';
import { WhoHasAccess } from './who-has-access';

// What authz's answers say they were read from (`dependsOn`) and what its tuple notices name must meet whenever a write
// changes an answer: a reader keeps the answer under the first and drops it on the second, so an answer that changed
// while nothing named meets what it read would be served stale. Checked here on every answer of two organizations
// against every write of one tuple, for both places checks read from (memory and the table).

const t = (user: string, relation: string, object: string): Tuple => ({ user, relation, object });

/** Whether a reader keeping an answer under `dependsOn` drops it on this notice. */
const drops = (notice: TuplesChanged, dependsOn: readonly string[]) => {
  const stale = tuplesNamed(notice);
  return stale === 'all' || dependsOn.some((tag) => stale.includes(tag));
};

/** Two organizations as orgs-teams and custom roles make them, each with an owners team, a team, a role and a cluster. */
const organization = (org: number): Tuple[] => [
  t('site:platform', 'site', `organization:${org}`),
  t(`organization:${org}`, 'organization', `team:${org}0`),
  t(`team:${org}0#member`, 'owner', `organization:${org}`),
  t(`user:${org}1`, 'member', `team:${org}0`),
  t(`organization:${org}`, 'organization', `team:${org}1`),
  t(`team:${org}1#member`, 'member', `organization:${org}`),
  t(`user:${org}2`, 'member', `team:${org}1`),
  t(`organization:${org}`, 'organization', `role:${org}5`),
  t(`role:${org}5#assignee`, 'edit', `organization:${org}`),
  t(`team:${org}1#member`, 'assignee', `role:${org}5`),
  t(`organization:${org}`, 'owner', `cluster:c${org}`),
];
const STORED = [...organization(1), ...organization(2), t('user:9', 'admin', 'site:platform')];

/** Writes of one tuple each: added where it is missing, taken away where it is stored. */
const WRITES: { writes: Tuple[]; deletes: Tuple[] }[] = [
  ...STORED.map((tuple) => ({ writes: [], deletes: [tuple] })),
  ...[1, 2]
    .flatMap((org) => [
      t(`user:${org}3`, 'member', `team:${org}1`),
      t(`user:${org}3`, 'member', `team:${org}0`),
      t(`user:${org}3`, 'maintainer', `team:${org}1`),
      t(`team:${org}0#member`, 'assignee', `role:${org}5`),
      t(`role:${org}5#assignee`, 'delete_team', `organization:${org}`),
      t(`user:${org}3`, 'view', `cluster:c${org}`),
    ])
    .map((tuple) => ({ writes: [tuple], deletes: [] })),
  { writes: [t('user:13', 'admin', 'site:platform')], deletes: [] },
];

/** The questions: each user of both organizations, on each organization, team, role and cluster. */
const QUESTIONS = [1, 2].flatMap((org) =>
  [`user:${org}1`, `user:${org}2`, `user:${org}3`, 'user:9'].flatMap((user) =>
    [
      [`organization:${org}`, 'member'],
      [`organization:${org}`, 'edit'],
      [`organization:${org}`, 'delete_team'],
      [`organization:${org}`, 'access'],
      [`team:${org}1`, 'view'],
      [`team:${org}1`, 'edit'],
      [`role:${org}5`, 'edit'],
      [`cluster:c${org}`, 'view'],
    ].map(([object, relation]) => ({ user, relation, object })),
  ),
);

let database: Awaited<ReturnType<typeof openEngineDatabase>>;
type Engine = Awaited<ReturnType<typeof database.engine>>['engine'];
beforeAll(async () => {
  database = await openEngineDatabase();
});
afterAll(async () => {
  await database?.close();
});

describe.each([
  ['in memory', { memory: true, inMemory: true }],
  ['from the table', { memory: false, inMemory: false }],
])('what an answer was read from, checks %s', (_mode, options) => {
  /** Runs `test` on an engine holding STORED (in memory too, in that mode), disposed after. */
  const withStored = async (test: (engine: Engine, authorization: Authorization) => Promise<void>) => {
    const { engine, dispose } = await database.engine(undefined, options);
    try {
      await engine.write(STORED, []);
      if (options.inMemory) await engine.load();
      await test(engine, new Authorization(engine, engine.model));
    } finally {
      await dispose();
    }
  };

  it('meets what every write that changes the answer names', async () => {
    await withStored(async (engine, authorization) => {
      const answers = async () => Promise.all(QUESTIONS.map((q) => recordingReads(() => authorization.check(q))));
      const before = await answers();
      let changed = 0;
      for (const write of WRITES) {
        await engine.write(write.writes, write.deletes);
        const named = await noticeOf([...write.writes, ...write.deletes], engine);
        const after = await answers();
        for (const [i, answer] of after.entries()) {
          if (answer.value === before[i].value) continue;
          changed++;
          const what = `${JSON.stringify(QUESTIONS[i])} after ${JSON.stringify(write)}`;
          expect(before[i].dependsOn.length).toBeGreaterThan(0);
          expect({ what, met: drops(named, before[i].dependsOn) }).toEqual({ what, met: true });
        }
        await engine.write(write.deletes, write.writes);
      }
      // The writes do change answers (else this would prove nothing).
      expect(changed).toBeGreaterThan(20);
    });
  });

  it("leaves another organization's answers out of what a write in one organization names", async () => {
    await withStored(async (engine, authorization) => {
      const ofOrg2 = QUESTIONS.filter(
        (q) => q.object.endsWith(':2') || q.object.endsWith('21') || q.object.endsWith('25') || q.object === 'cluster:c2',
      );
      const read = new Set(
        (await Promise.all(ofOrg2.map((q) => recordingReads(() => authorization.check(q))))).flatMap((a) => a.dependsOn),
      );
      const access = await recordingReads(() => new WhoHasAccess(engine, engine.model).of('organization:2', {}));
      for (const tag of access.dependsOn) read.add(tag);
      // A member joins a team of organization 1, and a role of organization 1 is granted a permission.
      for (const write of [t('user:13', 'member', 'team:11'), t('role:15#assignee', 'delete_team', 'organization:1')]) {
        const named = await noticeOf([write], engine);
        expect(named.orgs).toEqual([1]);
        expect(named.tags!.filter((tag) => read.has(tag))).toEqual([]);
      }
      expect(tupleTags(t('user:23', 'member', 'team:21')).some((tag) => read.has(tag))).toBe(true);
    });
  });

  it('keeps an answer read from one relation of an object through a write of another relation of it', async () => {
    await withStored(async (engine, authorization) => {
      // Whether team 11's member may edit organization 1 reads the organization's relations and the team's members,
      // never the team's maintainers.
      const asked = await recordingReads(() => authorization.check({ user: 'user:12', relation: 'edit', object: 'organization:1' }));
      expect(asked.value).toBe(true);
      const maintainer = t('user:13', 'maintainer', 'team:11');
      await engine.write([maintainer], []);
      const named = await noticeOf([maintainer], engine);
      expect(named.tags).toContain('team:11');
      expect(drops(named, asked.dependsOn)).toBe(false);
      // A new member of the same team may change it: dropped.
      expect(drops(await noticeOf([t('user:13', 'member', 'team:11')], engine), asked.dependsOn)).toBe(true);
      // A notice of an authz that named objects alone (during a rolling upgrade) drops it all the same.
      const { relations: _, ...byObject } = named;
      expect(drops({ ...byObject, tags: byObject.tags!.filter((tag) => !tag.includes('#')) }, asked.dependsOn)).toBe(true);
      await engine.write([], [maintainer]);
    });
  });
});
