/**
 * `npm run bench -- import [embedded,postgres,separate]`: onboarding in bulk (docs/import.md). It generates an import file of
 * BENCH_IMPORT_ORGS organizations (default 10,000) with BENCH_IMPORT_TEAMS teams (default 5) and BENCH_IMPORT_MEMBERS
 * members (default 20) each, every member in one of its teams (200,000 memberships by default), drawn from
 * BENCH_IMPORT_USERS users made first through the admin API (default 400, not timed), and imports it with the admin CLI (`cli import`, its default batches) into a fresh platform:
 *
 * - `embedded`: `npm start`'s launcher on a fresh DATA_DIR (PGlite);
 * - `postgres`: the same launcher with DATABASE_URL (a fresh database on BENCH_DATABASE_URL's server) and NATS_URL (a
 *   NATS server of its own), the hosted topology's data path;
 * - `separate`: the chart's topology, one process per app from its bundle (bench/separate.ts), on a database and NATS
 *   server as `postgres`'s; its memory is told per process, after the import and after the restart, which starts
 *   every app at once as a rollout of the chart does.
 *
 * With BENCH_IMPORT_ROLES=1 each organization also gets a custom role assigned to one of its teams (block
 * `import-roles`). Each mode imports the file, then imports it again (every organization found there, nothing written), and prints
 * memberships a second for both, as JSON on stdout and into docs/benchmarks.md. Around the import it measures what a
 * platform of that size costs: an organization's GET and teams list a second before and after it, the largest resident
 * set of its processes, and a restart on the imported data until ready. Progress goes to stderr.
 */
import { spawn, spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runLine, writeDocBlock } from './doc-block';
import { startAppProcesses, type AppProcesses } from './separate';
import { dropDatabase, freePort, freshDatabase, ROOT, runPlatform, startNats, waitFor } from './support';

const ORGS = Number(process.env.BENCH_IMPORT_ORGS ?? 10_000);
const TEAMS = Number(process.env.BENCH_IMPORT_TEAMS ?? 5);
const MEMBERS = Number(process.env.BENCH_IMPORT_MEMBERS ?? 20);
const USERS = Number(process.env.BENCH_IMPORT_USERS ?? 400);
/** BENCH_IMPORT_ROLES=1: each organization also gets a custom role, assigned to its first team (a block of its own). */
const ROLES = process.env.BENCH_IMPORT_ROLES === '1';
const PASSWORD = 'bench-admin-password';
const progress = (msg: string) => process.stderr.write(`[bench import] ${msg}\n`);

interface Run {
  seconds: number;
  memberships: number;
  perSecond: number;
}

interface ModeResult {
  mode: string;
  first: Run;
  again: Run;
  /** After the import: the largest resident set of the platform's processes, in MB. */
  rssMb: number;
  /** `separate`: each app's resident set in MB, after the import and after the restart. */
  rssByApp?: { peak: Record<string, number>; afterImport: Record<string, number>; afterRestart: Record<string, number> };
  /** `separate`: each app's memory limit in bytes where it ran in a cgroup of its pod's limit (bench/pod-limits.ts). */
  memoryLimits?: Record<string, number>;
  /** A restart on the imported data: seconds from start until ready. */
  restartSeconds: number;
  /** The probe organization's reads a second, on the platform before the import and after it. */
  reads: { row: string; before: number; after: number; share: number }[];
}

/** The reads measured before and after the import, on an organization of its own (`probe`, 5 teams). */
const READS = [
  { row: 'GET /orgs/probe', path: '/api/v1/orgs/probe' },
  { row: 'GET /orgs/probe/teams', path: '/api/v1/orgs/probe/teams' },
];
/** Seconds each read is measured, after two seconds of warm-up. */
const READ_SECONDS = Number(process.env.BENCH_IMPORT_READ_SECONDS ?? 5);

/** Requests a second `path` answers with 8 clients for READ_SECONDS (after two seconds' warm-up); 2xx only. */
async function readRate(base: string, pathname: string, token: string): Promise<number> {
  const run = (duration: number) =>
    autocannon({ url: `${base}${pathname}`, headers: { authorization: `token ${token}` }, connections: 8, duration });
  await run(2);
  const result = await run(READ_SECONDS);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${pathname}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return Math.round(result.requests.average);
}

/** The largest resident set among the process and its descendants, in MB (Linux /proc). */
function largestRssMb(pid: number): number {
  const children = (p: number): number[] => {
    const out = spawnSync('pgrep', ['-P', String(p)], { encoding: 'utf8' }).stdout.trim();
    return out ? out.split('\n').map(Number) : [];
  };
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...children(all[i]));
  return Math.max(...all.map(rssMbOf));
}

/** A process's resident set, in MB (Linux /proc). */
function rssMbOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** Each app's resident set, in MB. */
function rssByApp(apps: AppProcesses): Record<string, number> {
  return Object.fromEntries([...apps.processes].map(([app, child]) => [app, rssMbOf(child.pid!)]));
}

/** The file: organizations bench-<i>, owned by one of the users, their MEMBERS distinct users dealt over their teams. */
function importFile(dir: string): { file: string; memberships: number } {
  const organizations = Array.from({ length: ORGS }, (_, i) => ({
    name: `bench-${i}`,
    owners: [`user-${i % USERS}`],
    teams: Array.from({ length: TEAMS }, (_, t) => ({
      name: `team-${t}`,
      members: Array.from({ length: MEMBERS }, (_, m) => m)
        .filter((m) => m % TEAMS === t)
        .map((m) => `user-${(i * 7 + m) % USERS}`),
      roles: ROLES && t === 0 ? ['editors'] : [],
    })),
    roles: ROLES ? [{ name: 'editors', permissions: [{ namespace: 'org', action: 'edit' }] }] : [],
  }));
  const file = path.join(dir, 'organizations.json');
  fs.writeFileSync(file, JSON.stringify({ organizations }));
  return { file, memberships: ORGS * MEMBERS };
}

/** `cli import <file>` against the platform at `url`, timed; its stderr (progress) goes to ours. */
async function cliImport(file: string, url: string, token: string, memberships: number): Promise<Run> {
  const began = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'deploy/cli/cli.mjs'), 'import', file, '--url', url], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PLATFORM_TOKEN: token },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const seconds = (performance.now() - began) / 1000;
  process.stderr.write(out);
  if (code !== 0) throw new Error(`cli import exited with ${code}`);
  return { seconds: Math.round(seconds * 10) / 10, memberships, perSecond: Math.round(memberships / seconds) };
}

async function call(base: string, method: string, p: string, body: unknown, auth: string): Promise<any> {
  const res = await fetch(`${base}/api/v1${p}`, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Makes the users through the admin API, a few at once (password hashing is what they cost). */
async function makeUsers(base: string, token: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < USERS) {
        const i = next++;
        await call(
          base,
          'POST',
          '/admin/users',
          { username: `user-${i}`, email: `user-${i}@example.com`, password: 'bench-user-password', must_change_password: false },
          `token ${token}`,
        );
      }
    }),
  );
}

/** A platform under measure, whichever its topology. */
interface Running {
  base: string;
  /** The largest resident set of its processes, in MB, and each app's where apps run apart. */
  rss(): { largest: number; byApp?: Record<string, number> };
  /** Each app's memory limit in bytes where it runs in a cgroup of its pod's limit. */
  memoryLimits?: Record<string, number>;
  /** Stops it and starts it again on the same data; answers the seconds until it is ready. */
  restart(): Promise<number>;
  stop(): Promise<void>;
}

const ADMIN = { PLATFORM_ADMIN_USERNAME: 'root', PLATFORM_ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' };

/** `npm start`'s launcher, on the embedded database or on `hosted`'s Postgres and NATS. */
async function startLauncher(dataDir: string, hosted: Record<string, string>): Promise<Running> {
  const port = await freePort();
  const env = { HTTP_PORT: String(port), DATA_DIR: dataDir, ...ADMIN, ...hosted };
  const base = `http://127.0.0.1:${port}`;
  let platform = runPlatform('deploy/local/start.mjs', env);
  const stop = async () => {
    if (platform.exitCode !== null || platform.signalCode !== null) return;
    platform.kill('SIGTERM');
    await new Promise((r) => platform.once('exit', r));
  };
  await waitFor(`${base}/api/v1/version`, platform).catch(async (err) => {
    await stop();
    throw err;
  });
  return {
    base,
    rss: () => ({ largest: largestRssMb(platform.pid!) }),
    async restart() {
      await stop();
      const began = performance.now();
      platform = runPlatform('deploy/local/start.mjs', env);
      await waitFor(`${base}/readyz`, platform);
      return Math.round((performance.now() - began) / 100) / 10;
    },
    stop,
  };
}

/** One process per app (the chart's topology) on `hosted`'s Postgres and NATS. */
async function startSeparate(dataDir: string, hosted: Record<string, string>): Promise<Running> {
  const settings = { DEPLOYMENT_TYPE: 'Hosted', DATA_DIR: dataDir, ...ADMIN, ...hosted };
  const say = (msg: string) => progress(`separate: ${msg}`);
  let apps = await startAppProcesses(settings, say);
  return {
    get base() {
      return apps.base;
    },
    get memoryLimits() {
      return apps.memoryLimits;
    },
    rss: () => {
      const byApp = rssByApp(apps);
      return { largest: Math.max(...Object.values(byApp)), byApp };
    },
    async restart() {
      await apps.stop();
      const began = performance.now();
      // Every app at once, as a rollout of the chart starts its pods.
      apps = await startAppProcesses(settings, say, { staggerMs: 0 });
      await waitFor(`${apps.base}/readyz`, apps.processes.get('gateway')!);
      return Math.round((performance.now() - began) / 100) / 10;
    },
    stop: () => apps.stop(),
  };
}

/** Samples each app's resident set every second until stopped; answers the highest of each. */
function peakRss(platform: Running): { stop(): Record<string, number> } {
  const peak: Record<string, number> = {};
  const sample = () => {
    try {
      for (const [app, mb] of Object.entries(platform.rss().byApp ?? {})) peak[app] = Math.max(peak[app] ?? 0, mb);
    } catch {
      // an app that exited: the run says so where it waits on it
    }
  };
  const timer = setInterval(sample, 1000);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

async function benchMode(mode: string, file: string, memberships: number): Promise<ModeResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-import-${mode}-`));
  const dbName = `bench_import_${process.pid}`;
  const nats = mode === 'embedded' ? undefined : await startNats();
  const hosted: Record<string, string> = nats ? { DATABASE_URL: await freshDatabase(dbName), NATS_URL: nats.url } : {};
  let platform: Running | undefined;
  try {
    progress(`${mode}: starting the platform`);
    platform = mode === 'separate' ? await startSeparate(dataDir, hosted) : await startLauncher(dataDir, hosted);
    const base = platform.base;
    const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
    const token = (await call(base, 'POST', '/users/root/tokens', { name: 'import' }, basic)).sha1 as string;
    progress(`${mode}: making ${USERS} users (not timed)`);
    await makeUsers(base, token);
    await call(base, 'POST', '/orgs', { username: 'probe' }, `token ${token}`);
    for (let t = 0; t < 5; t++) await call(base, 'POST', '/orgs/probe/teams', { name: `team-${t}`, permission: 'read' }, `token ${token}`);
    progress(`${mode}: reads of an organization before the import`);
    const before = [];
    for (const read of READS) before.push(await readRate(base, read.path, token));
    progress(`${mode}: importing ${ORGS} organizations of ${TEAMS} teams and ${MEMBERS} members`);
    const peak = peakRss(platform);
    const first = await cliImport(file, `${base}/`, token, memberships);
    progress(`${mode}: ${first.perSecond} memberships/s; importing the same file again`);
    const again = await cliImport(file, `${base}/`, token, memberships);
    progress(`${mode}: reads of the same organization after the import`);
    const reads = [];
    for (const [i, read] of READS.entries()) {
      const after = await readRate(base, read.path, token);
      reads.push({ row: read.row, before: before[i], after, share: Math.round((after / before[i]) * 100) / 100 });
    }
    const peakByApp = peak.stop();
    const afterImport = platform.rss();
    progress(
      `${mode}: ${afterImport.largest} MB resident at most${afterImport.byApp ? ` (${JSON.stringify(afterImport.byApp)})` : ''}; restarting on the imported data`,
    );
    const restartSeconds = await platform.restart();
    const afterRestart = platform.rss();
    if (afterRestart.byApp) progress(`${mode}: after the restart ${JSON.stringify(afterRestart.byApp)}`);
    const rssByApp =
      afterImport.byApp && afterRestart.byApp
        ? { peak: peakByApp, afterImport: afterImport.byApp, afterRestart: afterRestart.byApp }
        : undefined;
    return { mode, first, again, rssMb: afterImport.largest, rssByApp, memoryLimits: platform.memoryLimits, restartSeconds, reads };
  } finally {
    await platform?.stop();
    if (nats) {
      await nats.stop();
      await dropDatabase(dbName);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  // The CLI's bundle made before anything is timed (`npm run cli` makes it when a source is newer).
  if (spawnSync(process.execPath, [path.join(ROOT, 'deploy/cli-ready.mjs')], { cwd: ROOT, stdio: 'inherit' }).status !== 0)
    throw new Error('bundling the CLI failed');
  const modes = (process.argv[2] ?? 'embedded,postgres,separate').split(',');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-import-file-'));
  const { file, memberships } = importFile(dir);
  const results: ModeResult[] = [];
  try {
    for (const mode of modes) results.push(await benchMode(mode, file, memberships));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify({ orgs: ORGS, teams: TEAMS, members: MEMBERS, users: USERS, results }, null, 2)}\n`);
  // The launcher's topologies and the chart's each have a block of their own, so a run of one leaves the other's.
  const launcher = results.filter((r) => r.mode !== 'separate');
  const chart = results.filter((r) => r.mode === 'separate');
  const name = ROLES ? 'import-roles' : 'import';
  if (launcher.length) writeDocBlock(name, docBlock(launcher, memberships));
  if (chart.length) writeDocBlock(`${name}-separate`, docBlock(chart, memberships));
}

const LABEL: Record<string, string> = {
  embedded: '`npm start`, embedded PGlite',
  postgres: '`npm start` with DATABASE_URL (Postgres) and NATS_URL',
  separate: 'one process per app (the chart), Postgres and NATS',
};

/** How the apps' memory was bounded: their pods' limits (the heap V8 sizes from them), or the host's. */
function limitsSaid(memoryLimits: Record<string, number> = {}): string {
  const limitsMiB = Object.fromEntries(Object.entries(memoryLimits).map(([app, bytes]) => [app, bytes / 2 ** 20]));
  if (Object.keys(limitsMiB).length === 0)
    return "each with this host's memory (BENCH_POD_LIMITS=off, or no cgroup could be made), so V8 sized its heap from that, not from its pod's limit";
  const distinct = [...new Set(Object.values(limitsMiB))];
  const said =
    distinct.length === 1
      ? `${distinct[0]} MiB each`
      : Object.entries(limitsMiB)
          .map(([app, mib]) => `${app} ${mib} MiB`)
          .join(', ');
  return `each in a memory cgroup of its pod's limit in the chart's values (${said}), from which V8 sizes its heap as in the pod`;
}

function docBlock(results: ModeResult[], memberships: number): string {
  const label = (r: ModeResult) => LABEL[r.mode] ?? r.mode;
  return [
    runLine(
      `${ORGS} organizations of ${TEAMS} teams and ${MEMBERS} members each, every member in one team (${memberships} memberships, and an owner each)${ROLES ? ', a custom role each assigned to one team' : ''}, from ${USERS} users; ` +
        '`cli import` with its default batches (5,000 memberships, 2 requests in flight).',
    ),
    '',
    '| topology | first import | memberships/s | same file again | memberships/s | largest RSS after | restart until ready |',
    '|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${label(r)} | ${r.first.seconds} s | ${r.first.perSecond} | ${r.again.seconds} s | ${r.again.perSecond} | ${r.rssMb} MB | ${r.restartSeconds} s |`,
    ),
    ...results
      .filter((r) => r.rssByApp)
      .flatMap((r) => {
        const apps = Object.keys(r.rssByApp!.afterImport);
        return [
          '',
          `${label(r)}: each process's resident set (MB) after the import and the reads, and after the restart; ${limitsSaid(r.memoryLimits)}:`,
          '',
          `| | ${apps.join(' | ')} |`,
          `|---|${apps.map(() => '---|').join('')}`,
          `| highest, sampled each second through the imports and the reads | ${apps.map((app) => r.rssByApp!.peak[app]).join(' | ')} |`,
          `| after the import | ${apps.map((app) => r.rssByApp!.afterImport[app]).join(' | ')} |`,
          `| after the restart | ${apps.map((app) => r.rssByApp!.afterRestart[app] ?? '—').join(' | ')} |`,
        ];
      }),
    '',
    'Reads of an organization of 5 teams (`probe`) a second, 8 clients, before the import and after it (targets: RSS ≤ 300 MB, restart ≤ 15 s, reads within 10% of before):',
    '',
    '| topology | read | before | after | share |',
    '|---|---|---|---|---|',
    ...results.flatMap((r) =>
      r.reads.map((x) => `| ${label(r)} | ${x.row} | ${x.before}/s | ${x.after}/s | ${Math.round(x.share * 100)}% |`),
    ),
  ].join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
