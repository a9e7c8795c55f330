import { randomUUID } from 'node:crypto';
import { subjectOf, type OpenedMessage } from '@platform/agent-protocol';
import { openDatabase, type Database } from '@platform/db';
import { agentV1, type usageReportV1 } from '@platform/proto';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { Ingestion, sampleRows } from '../src/ingestion/ingestion';
import { IngestionStore, rollUpSamples, rollUpSamplesByMonth } from '../src/ingestion/ingestion-store';
import { keepAllPoints } from '../src/usage/daily-series';
import { QUANTITY, SAMPLE_HOURS } from '../src/usage/quantities';
import { PRODUCTS, UsageReports, VIEWS, type ViewName } from '../src/usage-report/usage-report';
import { testCluster, testLicensing } from './agent-reports';

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
const H = 3_600_000;
const DAY = 24 * H;
const GIB = 2 ** 30;

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] };
}

/**
 * The usage views read monthly and daily per-object rollups that ingestion writes with the samples. These tests
 * ingest random samples (crossing and touching midnight and month ends, attributes changing within a day, messages
 * redelivered, samples reported again under new ids, an object's month arriving in many batches) and expect every
 * view to answer what the same statements answer over the samples themselves, one row per sample (schema `raw`:
 * the rollups' columns computed per sample, which is how the views aggregated the samples before).
 */
describe('usage views from monthly and daily rollups', () => {
  let db: Database;
  let raw: Database;
  let drop: () => Promise<void>;
  const SEED = 20261124;
  const rnd = random(SEED);
  const a = testCluster();
  const b = testCluster();
  const licensing = testLicensing({
    bindings: [a, b].flatMap((c) =>
      [5, 6].flatMap((id) => PRODUCTS.map((product) => ({ ownerId: c.ownerId, clusterUID: c.clusterUID, contract: { id, product } }))),
    ),
  });
  const objectIds = (prefix: string) => Array.from({ length: 3 }, (_, i) => `${prefix}000000-0000-4000-8000-00000000000${i}`);
  let applied = 0;
  let duplicates = 0;

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    await db.migrate(migrations);
    // Each object reports around the ends of September and October (two five-day windows): mostly an hour at a time, sometimes half an hour or a
    // stretch over midnight, sometimes a gap; now and then its contract, namespace, quota, topology, name or use
    // changes, so an object's day can hold several kinds of rows.
    const reports: { cluster: typeof a; sample: agentV1.UsageSample }[] = [];
    for (const [cluster, prefix, hosting] of [
      [a, 'a1', 'gks'],
      [b, 'b2', 'aws'],
    ] as const) {
      for (const objectUid of objectIds(prefix)) {
        const product = rnd.next() < 0.7 ? 'productdb' : rnd.pick(PRODUCTS);
        const windows = [Date.UTC(2026, 8, 28), Date.UTC(2026, 9, 29)];
        let t = windows[0] + rnd.int(24) * H;
        const end = windows[1] + 5 * DAY;
        let attrs: Partial<agentV1.UsageSample> = {};
        const change = () => {
          attrs = {
            contractId: rnd.pick([0, 5, 6]),
            namespace: rnd.pick(['db', 'shop']),
            namespaceUid: rnd.pick(['0b000000-0000-4000-8000-000000000001', '0b000000-0000-4000-8000-000000000002']),
            name: rnd.pick(['pg-1', 'pg-1-renamed']),
            kind: rnd.pick(['Postgres', 'MySQL']),
            topology: rnd.pick([agentV1.Topology.TOPOLOGY_CLUSTER, agentV1.Topology.TOPOLOGY_STANDALONE]),
            version: rnd.pick(['16.4', '17.0']),
          };
        };
        change();
        while (t < end) {
          if (rnd.next() < 0.04) change();
          const length = rnd.pick([H, H, H, H, H / 2, 5 * H, 90 * 60_000]);
          // Some samples start exactly at midnight or end exactly at it.
          const toMidnight = Math.ceil(t / DAY) * DAY - t;
          const span = rnd.next() < 0.05 && toMidnight > 0 ? toMidnight : length;
          const measured = rnd.next() < 0.7;
          const big = rnd.next() < 0.2;
          reports.push({
            cluster,
            sample: cluster.sample(t, t + span, {
              objectUid,
              product,
              hosting,
              replicas: 1 + rnd.int(3),
              ...attrs,
              resources: [
                { resource: 'cpu', request: big ? 1000 : 500, limit: big ? 2000 : 1000, used: measured ? 1 + rnd.int(900) : 0 },
                { resource: 'memory', request: (big ? 2 : 1) * GIB, limit: 0, used: measured ? rnd.int(GIB) : 0 },
                { resource: 'storage', request: 10 * GIB, limit: 0, used: measured && rnd.next() < 0.5 ? rnd.int(10 * GIB) : 0 },
              ],
            }),
          });
          t += span + (rnd.next() < 0.05 ? rnd.int(30) * H : 0);
          if (t > windows[0] + 5 * DAY && t < windows[1]) t = windows[1] + rnd.int(24) * H;
        }
      }
    }
    // Messages as ingestion gets them once opened (signatures are open()'s business and its own tests'): each id is
    // one message. Delivered in random batches; a fifth of them is delivered again later (in its own batch or twice
    // in one), and a tenth of the samples is reported again under a new message id (stored already: not counted again).
    const opened = new Map<string, OpenedMessage>();
    // nkeys derives the public key from the seed on every call: once per cluster.
    const keyOf = new Map([a, b].map((c) => [c, c.keys.getPublicKey()]));
    const message = ({ cluster, sample }: (typeof reports)[number]) => {
      const messageId = randomUUID();
      opened.set(messageId, {
        kind: 'usage-sample',
        payload: sample,
        messageId,
        clusterUID: cluster.clusterUID,
        sentAt: new Date(sample.endMs),
        senderPubKey: keyOf.get(cluster)!,
        account: { busPubKey: keyOf.get(cluster)!, revoked: false, id: 1, ownerId: cluster.ownerId },
      });
      return messageId;
    };
    const messages = reports.map(message);
    const again = messages.filter(() => rnd.next() < 0.2);
    const resent = reports.filter(() => rnd.next() < 0.1).map(message);
    const deliveries = [...messages, ...again, ...resent].map((id) => ({ id, order: rnd.next() }));
    deliveries.sort((x, y) => x.order - y.order);
    const ingestion = new Ingestion(db, async (id) => opened.get(id as string)!, licensing.records, quiet);
    for (let i = 0; i < deliveries.length;) {
      const size = 1 + rnd.int(40);
      const batch = deliveries.slice(i, i + size).map(({ id }) => id);
      if (rnd.next() < 0.2) batch.push(batch[0]);
      i += size;
      // A batch is one subject's: the messages of each cluster go in their own.
      for (const cluster of [a, b]) {
        const own = batch.filter((id) => opened.get(id)!.clusterUID === cluster.clusterUID);
        if (own.length === 0) continue;
        const subject = subjectOf(cluster.clusterUID, 'usage-sample');
        expect(
          await ingestion.receiveBatch(
            'usage-sample',
            own.map((payload) => ({ subject, payload })),
          ),
        ).toEqual(own.map(() => true));
      }
    }
    applied = Number((await db.table('agent_seen_messages').count({ n: '*' }))[0].n);
    duplicates = deliveries.length - applied;
    expect(applied).toBe(messages.length + resent.length);

    // Schema `raw`: the rollups' columns computed per sample, over the same samples.
    await createRawSchema(db);
    raw = await openDatabase({ url: test.url, dataDir: '', schema: 'raw' });
  }, 60_000);
  afterAll(async () => {
    await raw?.close();
    await db?.close();
    await drop?.();
  });

  const request = (v: Partial<usageReportV1.UsageViewRequest>): usageReportV1.UsageViewRequest => ({
    year: 2026,
    month: 10,
    product: 'productdb',
    view: 'clusters-usage-view',
    viewType: '',
    group: '',
    kind: '',
    clusterUid: '',
    namespace: '',
    namespaceUid: '',
    objectId: '',
    ...v,
  });

  it('ingests the random reports with redeliveries skipped', async () => {
    expect(duplicates).toBeGreaterThan(50);
    const [{ samples, rolled, days }] = (
      await db.knex.raw(`select (select count(*) from billing.usage_samples)::int as samples,
                                (select sum(samples) from billing.usage_object_days)::int as rolled,
                                (select count(*) from billing.usage_object_days)::int as days`)
    ).rows;
    // About four samples a day per object here (two dozen in production): a few rows a day per object.
    expect(days).toBeLessThan(samples / 3);
    expect(samples).toBeGreaterThan(400);
    // Each stored sample row is in exactly one day's rollup, once.
    expect(rolled).toBe(samples);
    const [months] = (
      await db.knex.raw(`select count(*)::int as n, sum(samples)::int as rolled,
                                (select count(*)::int from (select distinct cluster_uid, object_uid, month from billing.usage_samples) o) as objects
                           from billing.usage_object_months`)
    ).rows;
    // And in exactly one month's, once; a month of an object is one row unless its attributes changed within it.
    expect(months.rolled).toBe(samples);
    expect(months.n).toBeGreaterThanOrEqual(months.objects);
    expect(months.n).toBeLessThan(days);
  });

  it('rolls up the same rows as a GROUP BY over the samples', async () => {
    const byDay = (schema: string) =>
      db.knex.raw(
        `select cluster_uid, object_uid, day, product, contract_id, hosting, namespace, namespace_uid, "group", kind, topology,
                cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit,
                sum(samples)::int as samples, max(last_id) as last_id, min(first_at) as first_at, max(last_at) as last_at,
                max(replicas) as replicas, max(cpu_peak_used) as cpu, max(memory_peak_used) as memory, max(storage_peak_used) as storage,
                sum(cpu_core_hours)::text as c, sum(memory_gib_hours)::text as m, sum(storage_gib_hours)::text as s,
                sum(object_hours)::text as o, sum(replica_hours)::text as r
           from ${schema}.usage_object_days
          group by cluster_uid, object_uid, day, product, contract_id, hosting, namespace, namespace_uid, "group", kind, topology,
                   cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit
          order by cluster_uid, object_uid, day, last_id`,
      );
    const rolled = (await byDay('billing')).rows;
    const fromSamples = (await byDay('raw')).rows;
    expect(rolled.length).toBeGreaterThan(50);
    // The exact sums, compared as text.
    expect(rolled).toEqual(fromSamples);
    // Objects whose attributes changed within a day have several rows that day.
    const { rows } = await db.knex.raw(
      `select count(*)::int as n from (select 1 from billing.usage_object_days group by cluster_uid, object_uid, day having count(*) > 1) x`,
    );
    expect(rows[0].n).toBeGreaterThan(0);
  });

  it('rolls up by month the same rows as a GROUP BY over the samples, with the names of the last sample', async () => {
    const key = `cluster_uid, object_uid, month, product, contract_id, hosting, namespace, namespace_uid, "group", kind, topology,
                 cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit`;
    const byMonth = (schema: string) =>
      db.knex.raw(
        `select ${key}, sum(samples)::int as samples, max(last_id) as last_id, min(first_at) as first_at, max(last_at) as last_at,
                max(replicas) as replicas, max(cpu_peak_used) as cpu, max(memory_peak_used) as memory, max(storage_peak_used) as storage,
                sum(cpu_core_hours)::text as c, sum(memory_gib_hours)::text as m, sum(storage_gib_hours)::text as s,
                sum(object_hours)::text as o, sum(replica_hours)::text as r,
                (array_agg(cluster_name order by last_id desc))[1] as cluster_name, (array_agg(name order by last_id desc))[1] as name,
                (array_agg(version order by last_id desc))[1] as version
           from ${schema}.usage_object_months group by ${key} order by cluster_uid, object_uid, month, last_id`,
      );
    const rolled = (await byMonth('billing')).rows;
    expect(rolled.length).toBeGreaterThan(10);
    expect(rolled).toEqual((await byMonth('raw')).rows);
    // Names changed within a month, so the last sample's are not every sample's.
    const { rows } = await db.knex.raw(
      `select count(*)::int as n from (select 1 from billing.usage_samples group by cluster_uid, object_uid, month having count(distinct name) > 1) x`,
    );
    expect(rows[0].n).toBeGreaterThan(0);
  });

  /** Every monthly view, view type and filter the reports' data has, for the months around October. */
  function requests(): usageReportV1.UsageViewRequest[] {
    const all: usageReportV1.UsageViewRequest[] = [];
    const filters: Partial<usageReportV1.UsageViewRequest>[] = [
      {},
      { clusterUid: a.clusterUID },
      { contractId: 0 },
      { contractId: 5 },
      { kind: 'MySQL' },
      { group: 'kubedb.com' },
      { namespace: 'shop' },
      { namespaceUid: '0b000000-0000-4000-8000-000000000002' },
      { clusterUid: b.clusterUID, namespace: 'db', contractId: 6 },
    ];
    for (const month of [9, 10, 11])
      for (const [view, products] of Object.entries(VIEWS) as [ViewName, readonly string[]][])
        for (const product of products)
          for (const viewType of ['summary', 'daily']) for (const f of filters) all.push(request({ month, view, product, viewType, ...f }));
    return all;
  }

  it('answers every monthly view as the aggregate of the samples does', async () => {
    // Ingestion kept every object's daily points of each month, so ours shows kept points where it may, theirs
    // writes them from the samples (no points are kept in its schema).
    const { rows: kept } = await db.knex.raw(
      `select (select count(distinct (month, cluster_uid, object_uid))::int from billing.usage_object_days) as months,
              (select count(*)::int from billing.usage_object_month_points) as kept`,
    );
    expect(kept[0].kept).toBe(kept[0].months);
    const ours = new UsageReports(db);
    const theirs = new UsageReports(raw);
    let nonEmpty = 0;
    for (const req of requests()) {
      const got = JSON.parse(await ours.view(req));
      const want = JSON.parse(await theirs.view(req));
      // Level 2 adds float8s, whose order may differ between the two plans: the last bit of a sum over several
      // objects may, as between two runs of one plan. Per object the numbers are the same float8.
      expect({ req, view: got }).toEqual({ req, view: nearly(want) });
      if (got.rows.length > 0) nonEmpty++;
      if (req.view === 'objects-usage-view' || req.view === 'objects-cluster-mode-usage-view') expect(got.rows).toEqual(want.rows);
    }
    expect(nonEmpty).toBeGreaterThan(200);
  });

  it('answers the one-object views and namespace billing as the aggregate of the samples does', async () => {
    const ours = new UsageReports(db);
    const theirs = new UsageReports(raw);
    const { rows: objects } = await db.knex.raw('select distinct cluster_uid, object_uid from billing.usage_samples');
    for (const { cluster_uid, object_uid } of objects as { cluster_uid: string; object_uid: string }[]) {
      for (const view of ['objects-cluster-mode-usage-view', 'object-quota-history-summaries-view']) {
        const req = request({ view, clusterUid: cluster_uid, objectId: object_uid });
        const answer = (r: UsageReports) => r.view(req).then(JSON.parse, (err: Error) => err.message);
        expect(await answer(ours)).toEqual(await answer(theirs));
      }
    }
    for (const req of [
      { clusterUids: [a.clusterUID, b.clusterUID], clusterUid: '', namespace: '' },
      { clusterUids: [b.clusterUID], clusterUid: '', namespace: '' },
      { clusterUids: [a.clusterUID, b.clusterUID], clusterUid: a.clusterUID, namespace: 'db' },
      { clusterUids: [b.clusterUID], clusterUid: b.clusterUID, namespace: 'shop' },
    ])
      expect(JSON.parse(await ours.namespaceBilling(req))).toEqual(nearly(JSON.parse(await theirs.namespaceBilling(req))));
  });

  it('adds a sample reported later to its day, and a repeat of it to nothing', async () => {
    const store = IngestionStore.create(db);
    const day = () =>
      db
        .table('usage_object_days')
        .where({ cluster_uid: a.clusterUID, object_uid: objectIds('a1')[0] })
        .select(db.knex.raw('sum(samples)::int as samples, sum(object_hours)::text as hours'))
        .first();
    const before = await day();
    const late = a.sample(Date.UTC(2026, 10, 5, 23), Date.UTC(2026, 10, 6, 1), { objectUid: objectIds('a1')[0] });
    expect(await db.transaction((trx) => store.insertUsageSamples(sampleRows(late), trx))).toBe(2);
    expect(await db.transaction((trx) => store.insertUsageSamples(sampleRows(late), trx))).toBe(0);
    const after = await day();
    expect(after.samples).toBe(before.samples + 2);
    expect(Number(after.hours)).toBeCloseTo(Number(before.hours) + 2, 12);
  });

  it('counts a late sample of an earlier day, arriving in a later batch, in its day and month, with its names as the last stored', async () => {
    const store = IngestionStore.create(db);
    const object = objectIds('b2')[1];
    const month = () =>
      db
        .table('usage_object_months')
        .where({ cluster_uid: b.clusterUID, object_uid: object, month: '2026-10-01' })
        .select(db.knex.raw('sum(samples)::int as samples, sum(object_hours)::text as hours, max(last_id) as last_id'))
        .first();
    const before = await month();
    expect(before.samples).toBeGreaterThan(10);
    // Oct 30 00:07, inside the object's reported window, so inside a day it already has (a start of its own: stored).
    const late = b.sample(Date.UTC(2026, 9, 30, 0, 7), Date.UTC(2026, 9, 30, 0, 37), {
      objectUid: object,
      name: 'pg-late',
      version: '18.0',
    });
    expect(await db.transaction((trx) => store.insertUsageSamples(sampleRows(late), trx))).toBe(1);
    const after = await month();
    expect(after.samples).toBe(before.samples + 1);
    expect(Number(after.hours)).toBeCloseTo(Number(before.hours) + 0.5, 12);
    expect(Number(after.last_id)).toBeGreaterThan(Number(before.last_id));
    // The objects view shows the names of the object's last stored sample: the late one.
    const view = JSON.parse(
      await new UsageReports(db).view(request({ view: 'objects-usage-view', clusterUid: b.clusterUID, product: late.product })),
    );
    expect(view.rows.find((r: { objectID: string }) => r.objectID === object)).toMatchObject({ name: 'pg-late', version: '18.0' });
    // And every October view still answers what the samples do.
    const ours = new UsageReports(db);
    const theirs = new UsageReports(raw);
    for (const req of requests().filter((r) => r.month === 10 && (r.clusterUid === '' || r.clusterUid === b.clusterUID)))
      expect({ req, view: JSON.parse(await ours.view(req)) }).toEqual({ req, view: nearly(JSON.parse(await theirs.view(req))) });
  });

  it('rolls up, batch by batch, what one rollup of all the samples makes, by day and by month', async () => {
    for (const [table, order, rollUp] of [
      ['usage_object_days', 'cluster_uid, object_uid, day, attributes_key', rollUpSamples],
      ['usage_object_months', 'cluster_uid, object_uid, month, attributes_key', rollUpSamplesByMonth],
    ] as const) {
      const snapshot = async () => (await db.knex.raw(`select * from billing.${table} order by ${order}`)).rows;
      const rolled = await snapshot();
      await db.knex.raw(`truncate billing.${table}`);
      await db.knex.raw(rollUp('billing.usage_samples'), ['billing']);
      expect(await snapshot()).toEqual(rolled);
    }
  });

  it('keeps, batch by batch, the daily points that the day rollups make', async () => {
    const snapshot = async () =>
      (await db.knex.raw('select * from billing.usage_object_month_points order by cluster_uid, object_uid, month')).rows;
    const kept = await snapshot();
    expect(kept.length).toBeGreaterThan(10);
    await db.knex.raw('truncate billing.usage_object_month_points');
    await db.knex.raw(keepAllPoints(), ['billing', 'billing']);
    expect(await snapshot()).toEqual(kept);
  });
});

/** Schema `raw`: both rollups' columns computed per sample (a rollup of one sample each), over billing's samples. */
async function createRawSchema(db: Database): Promise<void> {
  const hours = SAMPLE_HOURS;
  const columns = `month, cluster_uid, object_uid, product, contract_id, hosting, namespace,
      namespace_uid, "group", kind, topology, cpu_request, cpu_limit, memory_request, memory_limit, storage_request, storage_limit,
      1 as samples, id as last_id, start_at as first_at, end_at as last_at, replicas, cpu_used as cpu_peak_used,
      memory_used as memory_peak_used, storage_used as storage_peak_used,
      ${hours} * ${QUANTITY.cpu} as cpu_core_hours, ${hours} * ${QUANTITY.memory} as memory_gib_hours,
      ${hours} * ${QUANTITY.storage} as storage_gib_hours, ${hours} as object_hours, replicas * ${hours} as replica_hours,
      (${hours} * ${QUANTITY.cpu})::float8 as cpu_core_hours_f8, (${hours} * ${QUANTITY.memory})::float8 as memory_gib_hours_f8,
      (${hours} * ${QUANTITY.storage})::float8 as storage_gib_hours_f8, (${hours})::float8 as object_hours_f8,
      (replicas * ${hours})::float8 as replica_hours_f8`;
  await db.knex.raw(`create schema raw;
    create view raw.usage_samples as select * from billing.usage_samples;
    create view raw.usage_object_days as select (start_at at time zone 'UTC')::date as day, ${columns} from billing.usage_samples;
    create view raw.usage_object_months as select cluster_name, name, version, ${columns} from billing.usage_samples;
    create table raw.usage_object_month_points (like billing.usage_object_month_points)`);
}

/** `value` with every fractional number matched to 9 decimal places (the rest exactly). */
function nearly(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? value : expect.closeTo(value, 9);
  if (Array.isArray(value)) return value.map(nearly);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, nearly(v)]));
  return value;
}
