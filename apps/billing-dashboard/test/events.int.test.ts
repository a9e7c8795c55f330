import { createUser } from 'nkeys.js';
import { answerResourceHistory, subjectOf, type AccountLookup } from '@platform/agent-protocol';
import { InProcessBus } from '@platform/bus';
import { openDatabase, type Database } from '@platform/db';
import { DeadlineError, InputError, NotFoundError, UnavailableError } from '@platform/errors';
import type { agentV1 } from '@platform/proto';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { ResourceEvents } from '../src/events/events';

const A = '0b7d4c1e-0000-4000-8000-00000000000a';
const B = '0b7d4c1e-0000-4000-8000-00000000000b';
const H = 3_600_000;
const DAY = 24 * H;
/** "Now" of the suite: the events sit at fixed times before it. */
const NOW = Date.UTC(2026, 10, 20, 12);
const PRODUCT = { userId: 7, clusterUid: A, licenseId: 'lic-1', product: 'productdb' };
const PG_KEY = 'kubedb.com/postgreses/db/pg-1';
const REDIS_KEY = 'kubedb.com/redises/db/rd-1';
const PG_ID = { group: 'kubedb.com', kind: 'Postgres', namespace: 'db', name: 'pg-1' };

describe('licensed-resource events and the resource history (docs/resource-events.md)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let bus: InProcessBus;
  const keys = createUser();
  const accounts: AccountLookup = {
    accountOf: async (pub) => (pub === keys.getPublicKey() ? { busPubKey: pub, revoked: false } : undefined),
    mayReportFor: async (_account, uid) => uid === A,
  };
  let events: ResourceEvents;

  const event = (key: string, version: number, agoHours: number, over: Record<string, unknown> = {}) => ({
    user_id: 7,
    cluster_uid: A,
    license_id: 'lic-1',
    product: 'productdb',
    group: 'kubedb.com',
    resource: key.split('/')[1],
    resource_id: JSON.stringify({ ...PG_ID, name: key.split('/')[3], version }),
    key,
    version,
    event_at: new Date(NOW - agoHours * H),
    partial_object_meta: JSON.stringify({ metadata: { name: key.split('/')[3], generation: version } }),
    ...over,
  });

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    bus = new InProcessBus();
    events = new ResourceEvents(db, { bus, accounts, timeoutMs: 300, now: () => NOW });
    await db.table('resource_events').insert([
      // pg-1: created 20 days ago, resized 10 days and 4 hours ago.
      event(PG_KEY, 1, 20 * 24),
      event(PG_KEY, 2, 10 * 24),
      event(PG_KEY, 3, 4),
      // rd-1: one event 2 days ago.
      event(REDIS_KEY, 1, 48),
      // Other licensed products: another license, another user, another cluster, another product.
      event('kubedb.com/postgreses/db/other-license', 1, 1, { license_id: 'lic-2' }),
      event('kubedb.com/postgreses/db/other-user', 1, 1, { user_id: 8 }),
      event(PG_KEY, 1, 1, { cluster_uid: B }),
      event('stash.appscode.com/backupconfigurations/db/bk', 1, 1, { product: 'productbackup', group: 'stash.appscode.com' }),
    ]);
    await db.table('licensed_products').insert({
      user_id: 7,
      cluster_uid: A,
      license_id: 'lic-1',
      product: 'productdb',
      first_received_at: new Date(NOW - 30 * DAY),
      last_received_at: new Date(NOW - H),
    });
  });
  afterAll(async () => {
    await bus?.close();
    await db?.close();
    await drop?.();
  });

  describe('events/ (lastDays)', () => {
    it('lists the events of the last 14 days by default, newest first, with their partial object metadata', async () => {
      const listed = await events.recent(PRODUCT, 0);
      expect(listed.map((e) => [e.key, e.version, e.eventAt.getTime()])).toEqual([
        [PG_KEY, 3, NOW - 4 * H],
        [REDIS_KEY, 1, NOW - 48 * H],
        [PG_KEY, 2, NOW - 10 * DAY],
      ]);
      expect(listed[0].partialObjectMeta).toEqual({ metadata: { name: 'pg-1', generation: 3 } });
    });

    it('keeps to the window lastDays gives', async () => {
      expect((await events.recent(PRODUCT, 1)).map((e) => e.version)).toEqual([3]);
      expect((await events.recent(PRODUCT, 2)).map((e) => e.key)).toEqual([PG_KEY, REDIS_KEY]);
      expect(await events.recent({ ...PRODUCT, licenseId: 'lic-9' }, 14)).toEqual([]);
    });

    it.each([15, -1, 1.5, 100])('refuses lastDays %s with a message (400)', async (lastDays) => {
      await expect(events.recent(PRODUCT, lastDays)).rejects.toThrow(new InputError('lastDays must be an integer from 1 to 14'));
    });
  });

  describe('events-histories', () => {
    it('counts every event of the product and measures first to last in hours, events per hour over that span', async () => {
      const r = await events.report(PRODUCT, { group: '', resource: '', rid: '' });
      expect(r.total).toBe(4);
      expect(r.eventTimes.map((t) => t.getTime())).toEqual([NOW - 20 * DAY, NOW - 10 * DAY, NOW - 48 * H, NOW - 4 * H]);
      const hours = 20 * 24 - 4;
      expect(r.durationHours).toBeCloseTo(hours, 9);
      expect(r.averagePerHour).toBeCloseTo(4 / hours, 12);
      // Two resources, two objects: no one resource, identity or key to name.
      expect(r).toMatchObject({ group: 'kubedb.com', resource: null, resourceId: null, key: null });
    });

    it('filters by resource and by rid (the resource-history key), naming the object of one key', async () => {
      const byResource = await events.report(PRODUCT, { group: 'kubedb.com', resource: 'postgreses', rid: '' });
      expect(byResource).toMatchObject({ total: 3, group: 'kubedb.com', resource: 'postgreses' });
      expect(byResource.resourceId).toEqual({ ...PG_ID, version: 3 });
      // Every event it counted is of one object: its key names it, as a rid would.
      expect(byResource.key).toBe(PG_KEY);
      const byKey = await events.report(PRODUCT, { group: '', resource: '', rid: PG_KEY });
      expect(byKey).toMatchObject({ total: 3, resource: 'postgreses', key: PG_KEY });
      expect(byKey.durationHours).toBeCloseTo(20 * 24 - 4, 9);
      expect((await events.report(PRODUCT, { group: 'other.io', resource: '', rid: '' })).total).toBe(0);
    });

    it('answers 0 hours and 0 events per hour for one event, and no NaN for none', async () => {
      const one = await events.report(PRODUCT, { group: '', resource: 'redises', rid: '' });
      expect(one).toMatchObject({ total: 1, durationHours: 0, averagePerHour: 0, resource: 'redises', key: REDIS_KEY });
      expect(one.eventTimes.map((t) => t.getTime())).toEqual([NOW - 48 * H]);
      const none = await events.report(PRODUCT, { group: '', resource: '', rid: 'no/such/key' });
      expect(none).toEqual({
        total: 0,
        group: null,
        resource: null,
        resourceId: null,
        key: 'no/such/key',
        eventTimes: [],
        durationHours: 0,
        averagePerHour: 0,
      });
    });
  });

  describe('events/raw-event', () => {
    it('answers the stored value of one (key, version)', async () => {
      const raw = await events.raw(PRODUCT, PG_KEY, 2);
      expect(raw).toEqual({ resourceId: { ...PG_ID, version: 2 }, licenseId: 'lic-1', version: 2, eventAt: new Date(NOW - 10 * DAY) });
    });

    it('is 404 for a version, key or licensed product without that event', async () => {
      await expect(events.raw(PRODUCT, PG_KEY, 4)).rejects.toBeInstanceOf(NotFoundError);
      // Versions count from 1: 0 is a valid unsigned integer that names no event.
      await expect(events.raw(PRODUCT, PG_KEY, 0)).rejects.toBeInstanceOf(NotFoundError);
      await expect(events.raw(PRODUCT, 'kubedb.com/postgreses/db/other-license', 1)).rejects.toBeInstanceOf(NotFoundError);
      await expect(events.raw({ ...PRODUCT, product: 'productbackup' }, PG_KEY, 1)).rejects.toBeInstanceOf(NotFoundError);
    });

    it('refuses a missing key, a negative version and a malformed licensed product (400)', async () => {
      await expect(events.raw(PRODUCT, '', 1)).rejects.toThrow(new InputError('key is required'));
      await expect(events.raw(PRODUCT, PG_KEY, -1)).rejects.toThrow(new InputError('version must be an unsigned integer'));
      await expect(events.raw({ ...PRODUCT, clusterUid: 'not-a-uuid' }, PG_KEY, 1)).rejects.toThrow(/clusterUid/);
      await expect(events.raw({ ...PRODUCT, userId: 0 }, PG_KEY, 1)).rejects.toThrow(/userId/);
      await expect(events.recent(undefined, 1)).rejects.toBeInstanceOf(InputError);
    });
  });

  describe('resources (asked live over the bus)', () => {
    const ITEMS: agentV1.ResourceHistoryItem[] = [
      {
        key: PG_KEY,
        lastSeenMs: NOW,
        values: [{ resourceIdJson: JSON.stringify(PG_ID), licenseId: 'lic-1', version: 1, timestampMs: NOW - 20 * DAY }],
      },
    ];
    const filter = { group: 'kubedb.com', resource: 'postgreses' };
    let stop: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await stop?.();
      stop = undefined;
    });

    it('asks the cluster for the licensed product with the filters and answers its verified history', async () => {
      const asked: agentV1.ResourceHistoryRequest[] = [];
      stop = await answerResourceHistory(bus, A, keys, async (req) => (asked.push(req), ITEMS));
      expect(await events.resourceHistory(PRODUCT, filter)).toEqual({ items: ITEMS });
      expect(asked).toEqual([
        expect.objectContaining({
          clusterUid: A,
          userId: 7,
          licenseId: 'lic-1',
          product: 'productdb',
          group: 'kubedb.com',
          resource: 'postgreses',
        }),
      ]);
    });

    it('is 404 without asking when the cluster never reported the product under the license', async () => {
      let asked = 0;
      stop = await answerResourceHistory(bus, A, keys, async () => (asked++, ITEMS));
      await expect(events.resourceHistory({ ...PRODUCT, licenseId: 'lic-2' }, filter)).rejects.toBeInstanceOf(NotFoundError);
      expect(asked).toBe(0);
    });

    it('is 504 naming the cluster when nobody answers, or not within the timeout', async () => {
      await expect(events.resourceHistory(PRODUCT, filter)).rejects.toThrow(
        new DeadlineError(`cluster ${A} did not answer the resource-history request within 300 ms`),
      );
      stop = await answerResourceHistory(bus, A, keys, () => new Promise((r) => setTimeout(() => r(ITEMS), 1_000)));
      await expect(events.resourceHistory(PRODUCT, filter)).rejects.toThrow(new RegExp(`cluster ${A} did not answer`));
    });

    it('waits no longer than the caller: the timeout ends before the call’s deadline', async () => {
      stop = await answerResourceHistory(bus, A, keys, () => new Promise((r) => setTimeout(() => r(ITEMS), 1_000)));
      const live = new ResourceEvents(db, { bus, accounts, timeoutMs: 5_000 });
      const started = Date.now();
      const deadline = new Date(started + 500);
      await expect(
        live.resourceHistory(PRODUCT, filter, { deadline, requestId: 'r', log: undefined as never, signal: new AbortController().signal }),
      ).rejects.toBeInstanceOf(DeadlineError);
      // The cluster's answer (at 1 s) would have resolved the call: the refusal is the caller's deadline. Well short of
      // the 5 s timeout it must not wait for, however busy the machine.
      expect(Date.now() - started).toBeLessThan(4_000);
    });

    it('is 503 when the cluster declines, says it cannot answer, or its answer does not verify', async () => {
      stop = await bus.reply(subjectOf(A, 'resource-history'), async () => null);
      await expect(events.resourceHistory(PRODUCT, filter)).rejects.toThrow(
        new UnavailableError(`cluster ${A} declined the resource-history request`),
      );
      await stop();
      stop = await answerResourceHistory(bus, A, keys, async () => {
        throw new Error('product not installed');
      });
      await expect(events.resourceHistory(PRODUCT, filter)).rejects.toThrow(
        new UnavailableError(`cluster ${A} could not answer the resource-history request: product not installed`),
      );
      await stop();
      stop = await answerResourceHistory(bus, A, createUser(), async () => ITEMS);
      await expect(events.resourceHistory(PRODUCT, filter)).rejects.toBeInstanceOf(UnavailableError);
    });
  });
});
