/**
 * `npm run bench -- ingestion [modes]`: agent reports applied per second by billing-dashboard's ingestion
 * (docs/billing-ingestion.md), from the first publish until every report's id is in agent_seen_messages,
 * beside the bare baseline in the same run: the same rows written straight into Postgres, 500 to a statement,
 * with no bus, no envelope and no verification. Modes (comma-separated, default all):
 *   jetstream  — the app on NATS JetStream (BENCH_NATS_URL / TEST_NATS_URL) and Postgres; the reports are
 *                published first and wait in the stream, the clock runs from the app's start of consuming
 *   in-process — the app on the in-process bus and Postgres
 *   embedded   — the in-process bus and the embedded database (PGlite, what `npm start` runs)
 * Reports are a third each license usage, resource events and usage samples of one hub's clusters, signed
 * with its key (sealed before the clock starts: sealing is the member cluster's cost). The bus-account lookup
 * is an in-memory stand-in (orgs-teams and clusters are asked once per batch per key in production), and so are
 * the licensing records reports are attributed from (contracts-licensing is asked once per batch in production).
 * Prints progress to stderr, JSON to stdout, and writes its block in docs/benchmarks.md.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createUser } from 'nkeys.js';
import pg from 'pg';
import { BusAccountDirectory, seal, signerOf, subjectOf, toBusPayload, type ReportKind } from '@platform/agent-protocol';
import { createBillingDashboardApp } from '@platform/app-billing-dashboard';
import { connectBus, type Bus } from '@platform/bus';
import { agentV1 } from '@platform/proto';
import { startApp, type RunningService } from '@platform/service-kit';
import { runLine, writeDocBlock } from './doc-block';
import { freshDatabase } from './support';

const REPORTS = Number(process.env.BENCH_REPORTS ?? 15_000);
const NATS = process.env.BENCH_NATS_URL ?? process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const TARGET = 5_000;
const KINDS = ['license-usage', 'resource-event', 'usage-sample'] as const;

const progress = (msg: string) => process.stderr.write(`[bench ingestion] ${msg}\n`);

/** One hub's reports: `n` sealed messages (kinds in turn) with the subjects they travel on. */
function reports(n: number) {
  const clusterUID = randomUUID();
  const keys = createUser();
  const signer = signerOf(keys.getSeed());
  const start = Date.UTC(2026, 0, 1);
  const messages: { subject: string; payload: string }[] = [];
  for (let i = 0; i < n; i++) {
    const kind: ReportKind = KINDS[i % 3];
    const object = `obj-${i % 200}`;
    const at = start + Math.floor(i / 3) * 60_000;
    let sealed: Uint8Array;
    if (kind === 'license-usage')
      sealed = seal(
        kind,
        { userId: 2, clusterUid: clusterUID, licenseId: `lic-${i % 20}`, product: 'productdb', receivedAtMs: at },
        signer,
      );
    else if (kind === 'resource-event')
      sealed = seal(
        kind,
        {
          userId: 2,
          clusterUid: clusterUID,
          licenseId: 'lic-1',
          product: 'productdb',
          group: 'kubedb.com',
          resource: 'postgreses',
          resourceIdJson: JSON.stringify({ group: 'kubedb.com', kind: 'Postgres', namespace: 'db', name: object }),
          key: `kubedb.com/postgreses/db/${object}`,
          version: Math.floor(i / 600) + 1,
          timestampMs: at,
          partialObjectMetaJson: JSON.stringify({ metadata: { name: object, namespace: 'db' } }),
        },
        signer,
      );
    else
      sealed = seal(
        kind,
        {
          product: 'productdb',
          contractId: 0,
          licenseId: 'lic-1',
          userId: 2,
          clusterUid: clusterUID,
          clusterName: 'hub-1',
          hosting: 'aws',
          namespace: 'db',
          namespaceUid: 'f0e1d2c3-0000-4000-8000-00000000000a',
          group: 'kubedb.com',
          kind: 'Postgres',
          name: object,
          objectUid: `f0e1d2c3-0000-4000-8000-${String(i % 200).padStart(12, '0')}`,
          version: '16.4',
          topology: agentV1.Topology.TOPOLOGY_STANDALONE,
          replicas: 1,
          startMs: at,
          endMs: at + 60_000,
          resources: [
            { resource: 'cpu', request: 500, limit: 1000, used: 250 },
            { resource: 'memory', request: 2 ** 30, limit: 0, used: 2 ** 29 },
          ],
        },
        signer,
      );
    messages.push({ subject: subjectOf(clusterUID, kind), payload: toBusPayload(sealed) });
  }
  const directory = new BusAccountDirectory(
    async (pub) => (pub === keys.getPublicKey() ? { busPubKey: pub, revoked: false, id: 1, ownerId: 2, clusterId: clusterUID } : undefined),
    async (uid) => (uid === clusterUID ? { uid, ownerType: 'organization', ownerId: 2, hubUid: '' } : undefined),
  );
  return { clusterUID, messages, directory };
}

interface Row {
  mode: string;
  reports: number;
  seconds: number;
  perSecond: number;
  publishSeconds: number;
}

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('not every report was applied in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts the billing app in a mode, publishes every report, and times until all are applied. */
async function benchMode(mode: 'jetstream' | 'in-process' | 'embedded'): Promise<Row> {
  progress(`${mode}: sealing ${REPORTS} reports`);
  const { clusterUID, messages, directory } = reports(REPORTS);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ingestion-'));
  const env: NodeJS.ProcessEnv = { GRPC_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'error' };
  if (mode !== 'embedded') env.DATABASE_URL = await freshDatabase('bench_ingestion');
  // The installation's namespace, known before it starts: the reports wait in its stream.
  const namespace = `bench-${clusterUID.slice(0, 8)}`;
  if (mode === 'jetstream') Object.assign(env, { NATS_URL: NATS, BUS_NAMESPACE: namespace });
  // On JetStream the reports wait in the stream before the consumers start (as after an outage), so the clock
  // measures ingestion alone, not the publisher sharing this machine's two cores; in-process publishing
  // costs little (and a consumer must exist first: that bus keeps nothing for a consumer it does not have).
  const agent: Bus | undefined = mode === 'jetstream' ? await connectBus(NATS, 'bench-ingestion', { namespace }) : undefined;
  let publishSeconds = 0;
  const publish = async (bus: Bus) => {
    const t = performance.now();
    for (let i = 0; i < messages.length; i += 500) {
      await Promise.all(messages.slice(i, i + 500).map((m) => bus.publish(m.subject, m.payload)));
      if ((i / 500) % 10 === 0) progress(`${mode}: published ${Math.min(i + 500, messages.length)}/${messages.length}`);
    }
    publishSeconds = (performance.now() - t) / 1000;
  };
  if (agent) await publish(agent);
  progress(`${mode}: starting billing-dashboard`);
  const app: RunningService = await startApp(
    createBillingDashboardApp({
      busAccountLookup: directory,
      licensingRecords: { issuedLicenses: async () => [], contractsBinding: async () => [] },
      ingestion: { durablePrefix: `bench-${clusterUID.slice(0, 8)}`, clusterUID },
    }),
    env,
  );
  const applied = async () => Number((await app.ctx.db!.table('agent_seen_messages').count({ n: '*' }))[0].n);
  try {
    const before = await applied();
    const t0 = performance.now();
    if (!agent) await publish(app.ctx.bus!);
    let last = 0;
    await until(async () => {
      const n = await applied();
      if (n - last >= REPORTS / 5) progress(`${mode}: applied ${(last = n)}/${REPORTS}`);
      return n >= REPORTS;
    }, 600_000);
    const seconds = (performance.now() - t0) / 1000;
    const row = { mode, reports: REPORTS - before, seconds, perSecond: (REPORTS - before) / seconds, publishSeconds };
    progress(`${mode}: ${Math.round(row.perSecond)} reports/s (${seconds.toFixed(2)} s)`);
    return row;
  } finally {
    await agent?.close();
    await app.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The baseline: the same number of rows into a bare table on the same Postgres, 500 to a statement, one transaction each. */
async function bare(): Promise<Row> {
  progress('bare: inserting into Postgres');
  const client = new pg.Client({ connectionString: await freshDatabase('bench_ingestion') });
  await client.connect();
  try {
    await client.query(`create table reports (id uuid primary key, cluster_uid uuid not null, kind text not null, body jsonb not null)`);
    const clusterUID = randomUUID();
    const t0 = performance.now();
    for (let i = 0; i < REPORTS; i += 500) {
      const n = Math.min(500, REPORTS - i);
      const values: unknown[] = [];
      const rows: string[] = [];
      for (let j = 0; j < n; j++) {
        rows.push(`($${j * 4 + 1}, $${j * 4 + 2}, $${j * 4 + 3}, $${j * 4 + 4})`);
        values.push(randomUUID(), clusterUID, KINDS[(i + j) % 3], JSON.stringify({ product: 'productdb', n: i + j }));
      }
      await client.query('begin');
      await client.query(`insert into reports values ${rows.join(', ')} on conflict do nothing`, values);
      await client.query('commit');
    }
    const seconds = (performance.now() - t0) / 1000;
    return { mode: 'bare: multi-row INSERT into Postgres', reports: REPORTS, seconds, perSecond: REPORTS / seconds, publishSeconds: 0 };
  } finally {
    await client.end();
  }
}

function table(rows: Row[], baseline: Row): string {
  const lines = ['| mode | reports | seconds | applied reports/s | share of bare | target ≥ 5,000/s |', '|---|---|---|---|---|---|'];
  for (const r of [baseline, ...rows]) {
    const share = r === baseline ? '—' : `${((100 * r.perSecond) / baseline.perSecond).toFixed(1)}%`;
    const target = r === baseline ? '—' : r.perSecond >= TARGET ? 'met' : '**not met**';
    lines.push(`| ${r.mode} | ${r.reports} | ${r.seconds.toFixed(2)} | ${Math.round(r.perSecond)} | ${share} | ${target} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const modes = (process.argv[2] ?? 'jetstream,in-process,embedded').split(',') as ('jetstream' | 'in-process' | 'embedded')[];
  const baseline = await bare();
  const rows: Row[] = [];
  for (const mode of modes) rows.push(await benchMode(mode));
  writeDocBlock('ingestion', [runLine(`${REPORTS} reports per mode, one run each.`), '', table(rows, baseline)].join('\n'));
  process.stdout.write(`${JSON.stringify({ baseline, rows }, null, 2)}\n`);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
