import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from '@platform/db';
import { usageReportV1 } from '@platform/proto';
import { createClient, createLogger, startGrpcServer, type PromiseClient, type RunningGrpcServer } from '@platform/service-kit';
import { createTestDatabase, eventually } from '@platform/testing';
import { migrations } from '../migrations';
import { usageReportService } from '../src/usage-report/service';
import { UsageReports } from '../src/usage-report/usage-report';

/**
 * A tenant of 100,000 objects of one product in a month (docs/usage-reports.md): the objects view is about 50 MB
 * of JSON, over ten times gRPC's 4 MiB message limit, and passes whole as a stream of pieces under that limit, its
 * rows in the view's order and its totals over all of them. A reader that stops early leaves no transaction open.
 * The same on the embedded database (`npm start`), with 10,000 objects (5 MB, still past the limit).
 */
describe.each([
  ['Postgres', 100_000],
  ['the embedded database', 10_000],
])('a usage view of many objects, streamed, on %s', (where, OBJECTS) => {
  let db: Database;
  let drop: () => Promise<void>;
  let server: RunningGrpcServer;
  let client: PromiseClient<typeof usageReportV1.UsageReportServiceService>;

  beforeAll(async () => {
    if (where === 'Postgres') {
      const test = await createTestDatabase();
      drop = test.drop;
      db = await openDatabase({ url: test.url, dataDir: '', schema: 'billing' });
    } else {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-stream-'));
      drop = async () => fs.rmSync(dataDir, { recursive: true, force: true });
      db = await openDatabase({ dataDir, schema: 'billing' });
    }
    await db.migrate(migrations);
    // One month row per object, as ingestion's rollup writes them: object i used i/1000 core-hours, on one of 40
    // clusters and 500 namespaces.
    await db.knex.raw(
      `insert into billing.usage_object_months (month, cluster_uid, object_uid, attributes_key, product, contract_id, hosting,
         namespace, namespace_uid, "group", kind, topology, cpu_request, cpu_limit, memory_request, memory_limit,
         storage_request, storage_limit, samples, last_id, cluster_name, name, version, first_at, last_at, replicas,
         cpu_peak_used, memory_peak_used, storage_peak_used, cpu_core_hours, memory_gib_hours, storage_gib_hours,
         object_hours, replica_hours)
       select '2026-10-01', ('00000000-0000-4000-8000-' || lpad((i % 40)::text, 12, '0'))::uuid,
         '0a000000-0000-4000-8000-' || lpad(i::text, 12, '0'), md5(i::text)::uuid, 'productdb', 0, 'gks',
         'ns-' || (i % 500), 'nsuid-' || (i % 500), 'kubedb.com', 'Postgres', 'STANDALONE', 250, 500, 1073741824, 0,
         10737418240, 0, 720, i, 'cluster-' || (i % 40), 'pg-' || i, '16.1', '2026-10-01T00:00:00Z', '2026-10-31T00:00:00Z',
         1, 250, 536870912, 0, i / 1000.0, 360, 7200, 720, 720
       from generate_series(1, ${OBJECTS}) i`,
    );
    await db.knex.raw('analyze billing.usage_object_months');
    server = await startGrpcServer({
      name: 'billing-dashboard',
      port: 0,
      host: '127.0.0.1',
      services: [usageReportService(new UsageReports(db))],
      protoFiles: ['platformadmin/billingdashboard/v1/usage_report.proto'],
      log: createLogger('billing-dashboard', 'silent'),
    });
    // The default 4 MiB message limit on both sides.
    client = createClient(usageReportV1.UsageReportServiceService, `127.0.0.1:${server.port}`, {
      name: 'billing-dashboard',
      deadlineMs: 120_000,
    });
  }, 120_000);
  afterAll(async () => {
    client?.close();
    await server?.shutdown(100);
    await db?.close();
    await drop?.();
  });

  const request = (view: string) =>
    usageReportV1.UsageViewRequest.create({ year: 2026, month: 10, product: 'productdb', view, viewType: 'summary' });

  it('answers the objects view whole: every object once, most core-hours first, totals over all, no piece over the limit', async () => {
    const pieces: Buffer[] = [];
    for await (const { json } of client.getUsageView(request('objects-usage-view'))) pieces.push(Buffer.from(json));
    const text = Buffer.concat(pieces).toString('utf8');
    expect(text.length).toBeGreaterThan((OBJECTS / 10_000) * 4 * 2 ** 20);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(4 * 2 ** 20);
    const view = JSON.parse(text) as {
      month: string;
      view: string;
      rows: { objectID: string; name: string; cpuCoreHours: number; namespace: string }[];
      totals: { rows: number; cpuCoreHours: number; objectHours: number };
    };
    expect({ month: view.month, view: view.view, rows: view.rows.length, unique: new Set(view.rows.map((r) => r.objectID)).size }).toEqual({
      month: '2026-10',
      view: 'objects-usage-view',
      rows: OBJECTS,
      unique: OBJECTS,
    });
    expect(view.rows[0]).toMatchObject({ name: `pg-${OBJECTS}`, cpuCoreHours: OBJECTS / 1000, namespace: `ns-${OBJECTS % 500}` });
    expect(view.rows.at(-1)).toMatchObject({ name: 'pg-1', cpuCoreHours: 0.001 });
    expect(view.rows.every((r, i) => i === 0 || view.rows[i - 1].cpuCoreHours >= r.cpuCoreHours)).toBe(true);
    expect(view.totals.rows).toBe(OBJECTS);
    expect(view.totals.cpuCoreHours).toBeCloseTo((OBJECTS * (OBJECTS + 1)) / 2 / 1000, 3);
    expect(view.totals.objectHours).toBe(OBJECTS * 720);
  }, 120_000);

  it('answers the smaller views of the same month as before: one row per cluster and namespace', async () => {
    let text = '';
    for await (const { json } of client.getUsageView(request('namespaces-usage-view'))) text += Buffer.from(json).toString('utf8');
    const view = JSON.parse(text);
    // Object i is on cluster i mod 40 in namespace i mod 500: 1,000 pairs (the least common multiple), all present.
    expect([view.rows.length, view.totals.rows]).toEqual([1_000, 1_000]);
  }, 60_000);

  it('a reader that stops after the first piece leaves no transaction open', async () => {
    for await (const _ of client.getUsageView(request('objects-usage-view'))) break;
    if (where !== 'Postgres') {
      // One connection: the next view answers only once the abandoned one's transaction has ended.
      let text = '';
      for await (const { json } of client.getUsageView(request('namespaces-usage-view'))) text += Buffer.from(json).toString('utf8');
      expect(JSON.parse(text).rows).toHaveLength(1_000);
      return;
    }
    const open = async () =>
      Number(
        (
          await db.knex.raw(
            "select count(*) as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'",
          )
        ).rows[0].n,
      );
    await eventually(async () => (await open()) === 0, 10_000);
  }, 60_000);
});
