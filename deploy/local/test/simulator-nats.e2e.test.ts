import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { createTestDatabase, eventually, startPrivateNats, type PrivateNats } from '@platform/testing';
import { interrupt, killLaunched, npmStart, ROOT, type StartedLauncher } from './launcher';

/**
 * The README's separate-process form: the platform started with NATS_URL (a NATS server of this file's own, so no
 * other platform's durable consumers share the stream), and `npm run simulate -- --nats <url> ...` in a process
 * of its own. Its reports are applied by clusters and billing-dashboard; run again with its state file it reuses
 * the hub and everything it resends is a duplicate; without the state file it says what to do.
 */
const ADMIN_PASSWORD = 'simulator-admin-password';

function simulate(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['deploy/simulator/simulate.mjs', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run simulate against a platform on NATS, from a separate process', () => {
  let nats: PrivateNats;
  let db: { url: string; drop(): Promise<void> };
  let sql: pg.Client;
  let platform: StartedLauncher;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simulator-e2e-'));
  const state = path.join(dir, 'state.json');

  beforeAll(async () => {
    nats = await startPrivateNats();
    db = await createTestDatabase();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    platform = await npmStart({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      DATA_DIR: path.join(dir, 'data'),
      PLATFORM_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LOG_LEVEL: 'warn',
    });
  }, 120_000);
  afterAll(async () => {
    if (platform) await interrupt(platform.child);
    killLaunched();
    await sql?.end();
    await db?.drop();
    await nats?.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const count = async (query: string, params: unknown[] = []) => Number((await sql.query(query, params)).rows[0].n);
  const metric = async (pattern: RegExp) => {
    const text = await (await fetch(`${platform.url}metrics`)).text();
    return text
      .split('\n')
      .filter((l) => pattern.test(l))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  };
  const args = (...more: string[]) => [
    '--url',
    platform.url,
    '--username',
    'admin',
    '--password',
    ADMIN_PASSWORD,
    '--org',
    'acme',
    '--hubs',
    '2',
    '--spokes',
    '2',
    '--months',
    '2',
    '--sample-hours',
    '12',
    '--seed',
    '42',
    '--nats',
    nats.url,
    ...more,
  ];

  it('feeds the platform every kind; a re-run with the state file changes nothing; without it, it says what to do', async () => {
    const run = await simulate(args('--state', state));
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /\[simulate\] published: inventory 2\/2, license-usage \d+\/\d+, resource-event \d+\/\d+, usage-sample \d+\/\d+/,
    );
    const result = JSON.parse(run.stdout);
    expect(result.hubs).toHaveLength(2);
    expect(fs.statSync(state).mode & 0o777).toBe(0o600);

    // Applied by clusters (the hubs and spokes, under acme) and billing-dashboard (every billing report once).
    expect(await count('select count(*)::int as n from clusters.clusters')).toBe(6);
    const applied = () =>
      count('select count(*)::int as n from billing.agent_seen_messages where cluster_uid = any($1::uuid[])', [result.clusterUids]);
    await eventually(async () => (await applied()) === result.billingReports, 60_000, 250);
    expect(await count('select count(*)::int as n from billing.usage_samples')).toBe(result.published['usage-sample']);
    expect(await count('select count(*)::int as n from billing.resource_events')).toBe(result.published['resource-event']);
    const rows = async () => ({
      clusters: await count('select count(*)::int as n from clusters.clusters'),
      licensed: await count('select count(*)::int as n from billing.licensed_products'),
      events: await count('select count(*)::int as n from billing.resource_events'),
      samples: await count('select count(*)::int as n from billing.usage_samples'),
      busAccounts: await count('select count(*)::int as n from identity.bus_accounts'),
    });
    const before = await rows();

    // Again with the state file: the hubs are reused, and every report it resends is taken as a duplicate.
    const duplicates = await metric(/^billing_agent_reports_total\{.*outcome="duplicate"/);
    const again = await simulate(args('--state', state));
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).hubs.map((h: any) => h.reused)).toEqual([true, true]);
    await eventually(
      async () => (await metric(/^billing_agent_reports_total\{.*outcome="duplicate"/)) - duplicates >= result.billingReports,
      60_000,
      250,
    );
    expect(await rows()).toEqual(before);

    // Without the state file the hub names are taken and their seeds are gone.
    const lost = await simulate(args());
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/already enrolled in organization acme.*--state.*another --org or --seed/s);
  }, 240_000);
});
