import { openDatabase, type Database } from '@platform/db';
import { ConflictError, ValidationError } from '@platform/errors';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { Outages, type OutageInput } from '../src/outages/outages';
import { systemOutagesService } from '../src/outages/service';

describe('system outages (docs/system-outages.md)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let outages: Outages;
  const H = 3_600_000;
  const t0 = Date.UTC(2026, 9, 1);
  const at = (hours: number) => new Date(t0 + hours * H);
  const outage = (o: Partial<OutageInput> & { from: number; to: number }): OutageInput => ({
    accountId: 7,
    accountName: 'acme',
    clusterId: 'c1',
    tags: [],
    comments: '',
    createdBy: 'root',
    ...o,
    start: at(o.from),
    end: at(o.to),
  });

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    outages = new Outages(db);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  describe('the overlap rule', () => {
    beforeAll(async () => {
      await db.table('system_outages').del();
    });

    it('stores an outage with its tags trimmed and distinct', async () => {
      const row = await outages.create(outage({ from: 0, to: 2, tags: [' network ', 'network', '', 'db'] }));
      expect(row).toMatchObject({ account_id: 7, account_name: 'acme', cluster_id: 'c1', tags: ['network', 'db'] });
      expect(row.start_at.toISOString()).toBe(at(0).toISOString());
      expect(row.id).toBeGreaterThan(0);
    });

    it('refuses an outage overlapping another of the same account and cluster', async () => {
      await expect(outages.create(outage({ from: 1, to: 3 }))).rejects.toBeInstanceOf(ConflictError);
      await expect(outages.create(outage({ from: -1, to: 5 }))).rejects.toBeInstanceOf(ConflictError);
      await expect(outages.create(outage({ from: 0.5, to: 1 }))).rejects.toBeInstanceOf(ConflictError);
    });

    it('accepts one that only touches it, or is of another account or cluster, or of none', async () => {
      await outages.create(outage({ from: 2, to: 3 }));
      await outages.create(outage({ from: -1, to: 0 }));
      await outages.create(outage({ from: 0, to: 2, clusterId: 'c2' }));
      await outages.create(outage({ from: 0, to: 2, accountId: 8, accountName: 'other' }));
      await outages.create(outage({ from: 0, to: 2, accountId: null, clusterId: '' }));
      await expect(outages.create(outage({ from: 1, to: 2, accountId: null, clusterId: '' }))).rejects.toBeInstanceOf(ConflictError);
    });

    it('lets only one of two concurrent overlapping creates through', async () => {
      const results = await Promise.allSettled([
        outages.create(outage({ from: 10, to: 12, clusterId: 'race' })),
        outages.create(outage({ from: 11, to: 13, clusterId: 'race' })),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(ConflictError);
    });

    it('refuses an outage that does not end after it starts', async () => {
      await expect(outages.create(outage({ from: 20, to: 20 }))).rejects.toBeInstanceOf(ValidationError);
      await expect(outages.create(outage({ from: 21, to: 20 }))).rejects.toBeInstanceOf(ValidationError);
    });
  });

  describe('the report', () => {
    beforeAll(async () => {
      await db.table('system_outages').del();
      // acme: 2 h on c1 (network, db) + 4 h on c2 (network); beta: 6 h on c1 (power); no account: 4 h on no cluster.
      await outages.create(outage({ from: 0, to: 2, tags: ['network', 'db'] }));
      await outages.create(outage({ from: 10, to: 14, clusterId: 'c2', tags: ['network'] }));
      await outages.create(outage({ from: 20, to: 26, accountId: 9, accountName: 'beta', tags: ['power'] }));
      await outages.create(outage({ from: 30, to: 34, accountId: null, clusterId: '' }));
    });

    it('counts outages and hours, the share of outages per tag and of hours per account and cluster', async () => {
      const { report, entries } = await outages.report({});
      expect(entries.map((e) => e.start_at.getTime())).toEqual([at(30), at(20), at(10), at(0)].map((d) => d.getTime()));
      expect(report.totalOutages).toBe(4);
      expect(report.totalDurationHours).toBeCloseTo(16);
      expect(report.topTagsPercentage).toEqual([
        { tag: 'network', percentage: 50 },
        { tag: 'db', percentage: 25 },
        { tag: 'power', percentage: 25 },
      ]);
      expect(report.topAccountsDuration).toEqual([
        { entity: '7', entityName: 'acme', durationHours: 6, percentage: 37.5 },
        { entity: '9', entityName: 'beta', durationHours: 6, percentage: 37.5 },
      ]);
      expect(report.topClustersDuration).toEqual([
        { entity: 'c1', entityName: 'c1', durationHours: 8, percentage: 50 },
        { entity: 'c2', entityName: 'c2', durationHours: 4, percentage: 25 },
      ]);
    });

    it('filters by start (outages ending after it), account, cluster and any of the tags', async () => {
      expect((await outages.report({ start: at(14) })).report.totalOutages).toBe(2);
      expect((await outages.report({ start: at(13) })).report.totalOutages).toBe(3);
      const acme = await outages.report({ accountId: 7 });
      expect(acme.report.totalDurationHours).toBeCloseTo(6);
      expect(acme.report.topAccountsDuration).toEqual([{ entity: '7', entityName: 'acme', durationHours: 6, percentage: 100 }]);
      expect((await outages.report({ clusterId: 'c1' })).report.totalOutages).toBe(2);
      const tagged = await outages.report({ tags: ['db', 'power'] });
      expect(tagged.entries.map((e) => e.account_name)).toEqual(['beta', 'acme']);
      expect((await outages.report({ accountId: 7, clusterId: 'c1', tags: ['network'] })).report.totalOutages).toBe(1);
    });

    it('answers zeros for no outages', async () => {
      expect((await outages.report({ tags: ['nothing'] })).report).toEqual({
        totalOutages: 0,
        totalDurationHours: 0,
        topTagsPercentage: [],
        topAccountsDuration: [],
        topClustersDuration: [],
      });
    });

    it('lists the distinct tags, sorted', async () => {
      expect(await outages.tags()).toEqual(['db', 'network', 'power']);
    });
  });

  // The gateway sends 0 for "no account" and for "no filter"; the service turns them into none before the rules run.
  describe('the RPCs', () => {
    const rpc = () => systemOutagesService(outages).handlers;
    const ctx = undefined as never;
    const request = (from: number, to: number, accountId = 0) => ({
      accountId,
      accountName: accountId ? 'acme' : '',
      clusterId: '',
      startMs: at(from).getTime(),
      endMs: at(to).getTime(),
      tags: [' power ', 'power'],
      comments: '',
      createdBy: 'root',
    });
    beforeAll(async () => {
      await db.table('system_outages').del();
    });

    it('stores an outage of no account as none, and holds two of no account to the overlap rule', async () => {
      const stored = await rpc().createOutage(request(20, 26), ctx);
      expect(stored).toMatchObject({ accountId: 0, accountName: '', clusterId: '', tags: ['power'], startMs: at(20).getTime() });
      expect((await db.table('system_outages').where({ id: stored.id }).first()).account_id).toBeNull();
      await expect(rpc().createOutage(request(25, 27), ctx)).rejects.toBeInstanceOf(ConflictError);
      await rpc().createOutage(request(25, 27, 7), ctx);
    });

    it('reads 0 and empty filters as none, and the others as given', async () => {
      const all = await rpc().outageReport({ startMs: 0, accountId: 0, clusterId: '', tags: [] }, ctx);
      expect(all.report?.totalOutages).toBe(2);
      expect(all.entries.map((e) => e.accountId)).toEqual([7, 0]);
      expect((await rpc().outageReport({ startMs: 0, accountId: 7, clusterId: '', tags: [] }, ctx)).report?.totalOutages).toBe(1);
      const late = await rpc().outageReport({ startMs: at(26.5).getTime(), accountId: 0, clusterId: '', tags: [] }, ctx);
      expect(late.entries.map((e) => e.accountId)).toEqual([7]);
      expect(await rpc().listOutageTags({}, ctx)).toEqual({ tags: ['power'] });
    });
  });
});
