/**
 * `npm run bench -- http`: the platform's HTTP routes against a bare Express 5 JSON handler, measured side by
 * side in one run, with bare node:http and Fastify handlers beside it, and the CPU each request costs.
 *
 * - `embedded`: the one process of `npm start` (embedded database) with the demo data (DEMO_SEED_MANIFEST,
 *   billing on), and every GET route the gateway registers there, taken from its route table, with path
 *   parameters and `?org=` filled from the demo's names and ids, called as the demo owner or, where a row
 *   requires a permission on the site, as the site admin; plus the allowed-permissions POST (2 objects).
 * - `separate`: one process per app on a real Postgres and NATS (as the chart runs them), with the same demo data
 *   (the launcher's demo seed, run from here against those processes) and the same routes.
 * - `authz`: the embedded authz engine's check at 1M tuples, depth 3 (bench/authz-check.ts).
 *
 * Each platform measurement is paired with a bare one taken just before it, so the ratio holds however busy
 * the machine is. A route that does not answer 2xx with the demo data is reported with its answer, never
 * measured as if it were fast. Prints progress to stderr, the JSON result to stdout, and, when every route was
 * run, writes the tables into docs/benchmarks.md.
 *
 * Write rows (bench/writes.ts) follow the GET rows in both topologies: creates, a member add, a PATCH and token
 * create and delete, each against a bare handler doing the same work (an INSERT on the same Postgres, or the same
 * scrypt), and the teams list of an untouched organization while another takes writes.
 *
 * Arguments: the modes, `embedded,separate,authz` (default all), then a filter (as BENCH_ROUTES; `writes` runs
 * the write rows alone). Environment: BENCH_ROUTES (a regular
 * expression over the route labels, e.g. `teams`; a filtered run does not touch the document),
 * BENCH_DURATION_S (per measurement, default 2), BENCH_ROUNDS (paired rounds per route, default 1; the median is
 * reported), BENCH_WARM_S (load on each side before a row's rounds, default 1), BENCH_WORK_ONLY=1
 * (print what each route costs inside the platform, statements / RPCs / checks per request, and measure nothing),
 * BENCH_STATEMENTS=1 (with it, also print the statements one call of each route ran on the embedded database),
 * BENCH_FROM_SOURCE=1 (run `npm start`'s launcher from its TypeScript through tsx instead of its bundle, to measure
 * what running the bundles is worth).
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import autocannon from 'autocannon';
import { registeredRoutesOn, type Route } from '@platform/app-gateway';
import { DEPLOYMENT_TYPES } from '@platform/service-kit';
import { runLine, writeDocBlock } from './doc-block';
import {
  PG_SERVER,
  ROOT,
  backendPids,
  cpuBetween,
  cpuSeconds,
  cpuByProcess,
  dropDatabase,
  freePort,
  freshDatabase,
  runPlatform,
  runPlatformSource,
  runTs,
  startBareCode,
  startNats,
  waitFor,
  type Bare,
} from './support';
import { startAppProcesses } from './separate';
import { WRITES_TAG, WRITE_ROWS, WRITE_TARGETS, startWriteBares, writeCalls, type WriteBares } from './writes';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 2);
/**
 * Calls of a route before its pair is measured (the first one tells what it answers): its caches filled, as in a
 * platform that has run a while. Short on purpose: a warm-up in seconds per route would double the run.
 */
const WARM_CALLS = 3;
/** Seconds of load on the bare handler and on the platform before a row's rounds (not measured): the JIT warm too. */
const WARM_S = Number(process.env.BENCH_WARM_S ?? 1);
/** What a call costs inside the platform is read over this many batches of this many calls (see probe). */
const WORK_BATCHES = 3;
const WORK_CALLS = 10;
const CONNECTIONS = 32;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
/** Only what each route costs inside the platform (statements, RPCs, checks per request), not its throughput. */
const WORK_ONLY = process.env.BENCH_WORK_ONLY === '1';
const SHOW_STATEMENTS = process.env.BENCH_STATEMENTS === '1';
const FILTER_SOURCE = process.argv[3] ?? process.env.BENCH_ROUTES;
const FILTER = FILTER_SOURCE ? new RegExp(FILTER_SOURCE) : undefined;
const FROM_SOURCE = process.env.BENCH_FROM_SOURCE === '1';
/** Print, beside each measurement, its CPU per request by process (where a row's CPU column goes). */
const CPU_BY_PROCESS = process.env.BENCH_CPU_BY_PROCESS === '1';
const PASSWORD = 'bench-admin-password';
/**
 * The deployment measured: hosted (contracts), billing on (the dashboard routes) and RUN_MODE=dev (the claim
 * route). The marketplace routes need a marketplace deployment type instead, and are listed as not measured.
 */
const DEPLOYMENT = { DEPLOYMENT_TYPE: 'Hosted', BILLING_ENABLED: 'true', RUN_MODE: 'dev' };

const EMBEDDED = 'one process, embedded';
const SEPARATE = 'separate processes, Postgres';
const ALLOWED_PERMISSIONS = 'POST /api/v1/authz/objects/allowed-permissions (2 objects)';
const ORG_GET = 'GET /api/v1/orgs/:orgname';
const TEAMS_LIST = 'GET /api/v1/orgs/:orgname/teams';
/**
 * Share of the bare Express handler's throughput a GET route should reach, per topology, unless TARGETS names it: one
 * that makes at most one call between apps and no statement (LEAN_GET), and any other (EVERY_GET). The separate
 * processes' rows are judged by the calls the same route makes on `npm start`.
 */
const LEAN_GET: Record<string, number> = { [EMBEDDED]: 0.4, [SEPARATE]: 0.2 };
const EVERY_GET: Record<string, number> = { [EMBEDDED]: 0.2, [SEPARATE]: 0.15 };
const TARGETS: Record<string, Record<string, number>> = {
  [EMBEDDED]: { [ORG_GET]: 0.8, [ALLOWED_PERMISSIONS]: 0.3, ...WRITE_TARGETS },
  [SEPARATE]: { [ORG_GET]: 0.5, [ALLOWED_PERMISSIONS]: 0.3, ...WRITE_TARGETS },
};
/** CPU a request may cost, in µs: every process of the platform together (separate: NATS and Postgres included). */
const CPU_TARGETS_US: Record<string, Record<string, number>> = {
  [EMBEDDED]: { [ORG_GET]: 150 },
  [SEPARATE]: { [TEAMS_LIST]: 1_000 },
};
/**
 * Routes slow by design, measured in their own rows without a share target: what makes them slow is their job.
 * Matched on the label, the reason shown in the table.
 */
const BY_DESIGN: [RegExp, string][] = [
  [/^GET \/api\/v1\/users\/:username\/tokens$/, 'Basic credentials: scrypt on every request, by design'],
  [/\/download$/, 'renders a PDF per request'],
  [/^GET \/api\/v1\/objects\//, 'an object download: a signed URL checked and the object read'],
  [/\/products\/:productName\/resources$/, 'a resource history asked live of the member cluster over the bus'],
];
const byDesign = (label: string) => BY_DESIGN.find(([re]) => re.test(label))?.[1];
/** Routes the demo data cannot call as they are meant to be called, with the reason; listed as not measured. */
const UNCALLABLE: [RegExp, string][] = [
  [/^GET \/api\/v1\/user\/session$/, 'it answers a console session (a cookie), which the demo signs no one in with'],
  [/^GET \/api\/v1\/user\/oidc\//, 'single sign-on is not configured in the demo'],
  [/^GET \/api\/v1\/user\/email-verification$/, 'a verification link is spent by its first use (each call would need a new mail)'],
];

const progress = (msg: string) => process.stderr.write(`[bench http] ${msg}\n`);

/** How a route is called: path and query filled, its caller's credentials. */
export interface Call {
  label: string;
  /** Who calls: `owner` (the demo organization's owner), `site admin`, `owner (basic)` (a Basic-auth row). */
  as: string;
  /** Below the base URL: /api/v1/..., with the query. */
  url: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  /** Each request's own path and body, where each must differ (a write of a new name): `url` and `body` are the first's. */
  next?: () => { url: string; body?: string };
  /** Sees each answer (a token create hands its token to the delete row). */
  onAnswer?: (status: number, body: string) => void;
  /** Connections of the load (CONNECTIONS unless set). */
  connections?: number;
  /** What the row is compared with: bare Express answering JSON unless set (see bench/writes.ts). */
  against?: 'insert' | 'scrypt' | 'alone';
  /** Load run beside the platform's measurement (not the bare one's), for as long: answers its 2xx a second. */
  beside?: (durationS: number) => Promise<number>;
  /**
   * Calls made before what a call costs is counted (WARM_CALLS unless set): a row whose requests go round many targets
   * (the member row's teams) warms each once, or its count is of first visits that its load seldom makes.
   */
  warmCalls?: number;
}

/** A route that is not measured, and why. */
interface Skipped {
  label: string;
  why: string;
}

/** What the demo data (and what the bench adds to it) gives the route rows' parameters. */
interface Fill {
  /** Values of path parameters by name. */
  params: Record<string, string>;
  /** Values that differ where a name means something else: the first row whose path matches wins. */
  byPath: [RegExp, Record<string, string>][];
  /** Values of required query parameters by name (`byPath` gives optional ones too). */
  query: Record<string, string>;
  /** Parameters the demo data cannot fill, with the reason. */
  absent: Record<string, string>;
  ownerToken: string;
  rootToken: string;
  ownerBasic: string;
  /** The allowed-permissions POST's body: the organization and one of its teams. */
  allowedBody: string;
}

const labelOf = (r: Route) => `${r.method.toUpperCase()} /api/v1${r.path}`;

/** The query parameters of a row, each with whether the row requires it. */
function queryKeys(r: Route): { name: string; required: boolean }[] {
  const shape = (r.query as { shape?: Record<string, { safeParse(v: unknown): { success: boolean } }> } | undefined)?.shape;
  return Object.entries(shape ?? {}).map(([name, s]) => ({ name, required: !s.safeParse(undefined).success }));
}

/** How to call a GET row with the demo data, or why it cannot be. */
function plan(r: Route, fill: Fill): Call | Skipped {
  const label = labelOf(r);
  const uncallable = UNCALLABLE.find(([re]) => re.test(label))?.[1];
  if (uncallable) return { label, why: uncallable };
  const special = fill.byPath.find(([re]) => re.test(r.path))?.[1] ?? {};
  const missing: string[] = [];
  const filled = r.path.replace(/[:*]([A-Za-z0-9_]+)/g, (_, name: string) => {
    const v = special[name] ?? fill.params[name];
    if (v === undefined) missing.push(`:${name}`);
    return v === undefined ? '' : v.split('/').map(encodeURIComponent).join('/');
  });
  const query = new URLSearchParams();
  if (r.org) query.set('org', fill.params.orgname);
  // Optional query parameters only where a row's own values name them (the signed object URL's).
  for (const { name, required } of queryKeys(r)) {
    const v = special[name] ?? (required ? fill.query[name] : undefined);
    if (v !== undefined) query.set(name, v);
    else if (required) missing.push(`?${name}`);
  }
  if (missing.length) {
    const reasons = [...new Set(missing.map((m) => fill.absent[m.slice(1)]).filter(Boolean))];
    return { label, why: reasons.length ? reasons.join('; ') : `the demo data has no value for ${missing.join(', ')}` };
  }
  const site = (r.requires ?? []).some((q) => q.on === 'site');
  const [as, authorization] =
    r.auth === 'basic'
      ? ['owner (basic)', fill.ownerBasic]
      : site
        ? ['site admin', `token ${fill.rootToken}`]
        : ['owner', `token ${fill.ownerToken}`];
  const qs = query.toString();
  return { label, as, url: `/api/v1${filled}${qs ? `?${qs}` : ''}`, method: 'GET', headers: { authorization } };
}

const isSkipped = (c: Call | Skipped): c is Skipped => 'why' in c;

/** The allowed-permissions POST, as the demo owner, on the organization and one of its teams. */
function allowedPermissions(fill: Fill): Call {
  return {
    label: ALLOWED_PERMISSIONS,
    as: 'owner',
    url: `/api/v1/authz/objects/allowed-permissions?org=${fill.params.orgname}`,
    method: 'POST',
    headers: { authorization: `token ${fill.ownerToken}`, 'content-type': 'application/json' },
    body: fill.allowedBody,
  };
}

/** Every row some deployment registers that this one does not, with the gate that keeps it out. */
function gatedOut(registered: Route[]): Skipped[] {
  const here = new Set(registered);
  const seen = new Set<Route>();
  const out: Skipped[] = [];
  for (const type of DEPLOYMENT_TYPES)
    for (const r of registeredRoutesOn({ ...DEPLOYMENT, DEPLOYMENT_TYPE: type })) {
      if (r.method !== 'get' || here.has(r) || seen.has(r)) continue;
      seen.add(r);
      out.push({ label: labelOf(r), why: `its gate \`${r.gate}\` is closed on a ${DEPLOYMENT.DEPLOYMENT_TYPE} deployment` });
    }
  return out;
}

/** A bare handler: a process of its own answering every GET with a small JSON body, and every POST with `[]`. */

/**
 * The bare baselines, each in a process of its own like the platform: Express 5 (what every row is compared with),
 * node:http and Fastify (shown beside it: what the HTTP layer itself costs).
 */
const BARE_SERVERS = {
  express: `const e = require('express')();
    e.get('*splat', (_q, r) => r.json(answer));
    e.post('*splat', (_q, r) => r.json([]));
    e.listen(PORT, '127.0.0.1');`,
  'node:http': `require('node:http').createServer((q, r) => {
      const body = JSON.stringify(q.method === 'POST' ? [] : answer);
      q.resume();
      q.on('end', () => { r.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }); r.end(body); });
    }).listen(PORT, '127.0.0.1');`,
  fastify: `const f = require('fastify')();
    f.get('*', async () => answer);
    f.post('*', async () => []);
    f.listen({ port: PORT, host: '127.0.0.1' });`,
} as const;
type BareKind = keyof typeof BARE_SERVERS;

function startBare(kind: BareKind): Promise<Bare> {
  const answer = JSON.stringify({ id: 1, username: 'bench', full_name: '', description: '' });
  return startBareCode(`const answer = ${answer};\n${BARE_SERVERS[kind]}`);
}

interface Platform {
  base: string;
  /** The processes whose CPU a request costs: the platform's and, on Postgres and NATS, theirs. */
  pids(): number[] | Promise<number[]>;
  /** The statements the embedded database has run so far, in order (with BENCH_STATEMENTS=1: knex's debug output). */
  statements?: string[];
  /** The demo manifest. */
  manifest?: DemoManifest;
  stop(): Promise<void>;
}

/** The keys of the demo manifest the bench reads (deploy/local/src/demo-seed.ts writes it). */
interface DemoManifest {
  owner: { org: string; username: string; password: string };
  hub: { name: string; uid: string };
  spokes: { name: string; uid: string }[];
  namespace: string;
  usage?: {
    uid: number;
    cid: string;
    lid: string;
    product: string;
    eventKey: string;
    eventVersion: number;
    objectID: string;
    namespace: string;
    year: string;
    month: string;
  };
  quotaExceeded?: { contractID: number; cluster: string };
  outdatedClusterSet?: string;
  sharedGatewayClientOrg?: number;
}

/** `npm start`'s one process on the embedded database, in a fresh DATA_DIR, with the demo data seeded. */
async function startEmbedded(): Promise<Platform> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-http-'));
  const manifestFile = path.join(dataDir, 'demo.json');
  let seedFailed: string | undefined;
  const statements: string[] = [];
  const child = (FROM_SOURCE ? runPlatformSource : runPlatform)(
    FROM_SOURCE ? 'deploy/local/src/main.ts' : 'deploy/local/start.mjs',
    {
      ...DEPLOYMENT,
      HTTP_PORT: String(port),
      DATA_DIR: path.join(dataDir, 'data'),
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_PASSWORD: PASSWORD,
      DEMO_SEED_MANIFEST: manifestFile,
      LOG_LEVEL: 'info',
      ...(SHOW_STATEMENTS ? { DEBUG: 'knex:query' } : {}),
    },
    (line) => {
      if (line.includes('demo seed failed')) seedFailed = line;
      const at = line.indexOf('knex:query ');
      if (at < 0) return false;
      statements.push(line.slice(at + 'knex:query '.length).replace(/ undefined$/, ''));
      return true;
    },
  );
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(`${base}/api/v1/version`, child);
    progress(`${EMBEDDED}: up; waiting for the demo seed's manifest`);
    const until = Date.now() + 10 * 60_000;
    while (!fs.existsSync(manifestFile)) {
      if (seedFailed) throw new Error(`the demo seed failed: ${seedFailed}`);
      if (child.exitCode !== null) throw new Error(`the platform exited with ${child.exitCode} while seeding`);
      if (Date.now() > until) throw new Error('the demo seed wrote no manifest within 10 minutes');
      await new Promise((r) => setTimeout(r, 500));
    }
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as DemoManifest;
    return { base, manifest, stop, pids: () => [child.pid!], statements: SHOW_STATEMENTS ? statements : undefined };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One process per app, as the Helm chart runs them, on a fresh Postgres database and the NATS server. */
async function startSeparate(): Promise<Platform> {
  const name = `bench_http_${process.pid}`;
  const databaseUrl = await freshDatabase(name);
  const nats = await startNats();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-http-'));
  const common = {
    ...DEPLOYMENT,
    DATABASE_URL: databaseUrl,
    NATS_URL: nats.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    PLATFORM_ADMIN_USERNAME: 'root',
    PLATFORM_ADMIN_PASSWORD: PASSWORD,
  };
  const apps = await startAppProcesses(common, (msg) => progress(`${SEPARATE}: ${msg}`)).catch(async (err) => {
    await nats.stop();
    throw err;
  });
  const children = [...apps.processes.values()];
  const manifest = await seedSeparate(apps.base, apps.env, apps.ports.clusters, children).catch(async (err) => {
    await apps.stop();
    await nats.stop();
    throw err;
  });
  return {
    base: apps.base,
    manifest,
    // Its own Postgres backends (those on its database) and its own NATS server: nothing else the machine runs.
    pids: async () => [...children.filter((c) => c.exitCode === null).map((c) => c.pid!), nats.pid, ...(await backendPids(name))],
    async stop() {
      // The demo seed's simulated hub too: it stops with the apps. The apps are signalled once, by `apps.stop`: a
      // second SIGTERM would end them at once (their handler is a `once`), skipping their graceful stop and the CPU
      // profiles BENCH_CPU_PROFILE asks for.
      const appProcesses = new Set(apps.processes.values());
      children.filter((c) => !appProcesses.has(c)).forEach((c) => c.kill('SIGTERM'));
      await apps.stop();
      await Promise.all(
        children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined)),
      );
      await nats.stop();
      await dropDatabase(name);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The demo data on the separate processes: the launcher's demo seed run against them by
 * deploy/local/src/seed-separate.ts (their gateway, NATS, clusters' gRPC port, billing's schema), so both
 * topologies answer the same routes over the same data.
 */
async function seedSeparate(
  base: string,
  env: Record<string, string>,
  clustersPort: number,
  children: ChildProcess[],
): Promise<DemoManifest> {
  progress(`${SEPARATE}: up; running the demo seed against it`);
  const manifestFile = path.join(env.DATA_DIR, 'demo.json');
  const seed = runTs('deploy/local/src/seed-separate.ts', {
    ...env,
    PLATFORM_URL: `${base}/`,
    CLUSTERS_GRPC_PORT: String(clustersPort),
    DEMO_SEED_MANIFEST: manifestFile,
  });
  // It keeps the simulated hub running once the manifest is written (the resource-history route asks it live): it
  // stops with the apps.
  children.push(seed);
  while (!fs.existsSync(manifestFile)) {
    if (seed.exitCode !== null) throw new Error(`the demo seed exited with ${seed.exitCode} and wrote no manifest (see above)`);
    await new Promise((r) => setTimeout(r, 500));
  }
  // Whole once it exists: the seed writes it to a temporary file and renames it.
  return JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as DemoManifest;
}

/** A client of the platform's API that throws on an unexpected answer. */
function client(base: string) {
  return async (method: string, p: string, body: unknown, auth: string, ok = [200, 201]) => {
    const res = await fetch(`${base}/api/v1${p}`, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!ok.includes(res.status)) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
}

const basicOf = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * What the owner adds to the organization, as a client would: 10 teams and a custom role given to the last one,
 * so the teams list has a page to answer and the role routes a role. Answers the last team's id and the role's.
 */
async function addTeamsAndRole(base: string, org: string, ownerToken: string): Promise<{ teamId: number; roleId: number }> {
  const call = client(base);
  const auth = `token ${ownerToken}`;
  let teamId = 0;
  for (let i = 0; i < 10; i++) teamId = (await call('POST', `/orgs/${org}/teams`, { name: `team-${i}`, type: 'general' }, auth)).id;
  const role = await call(
    'POST',
    `/authz/roles?org=${org}`,
    { name: 'editors', permissions: [{ namespace: 'org', action: 'edit' }], teamIDs: [teamId] },
    auth,
  );
  return { teamId, roleId: role.id };
}

/** The parameters of every route, from the demo manifest and a few answers of the API. */
async function demoFill(base: string, m: DemoManifest): Promise<Fill> {
  const call = client(base);
  const org = m.owner.org;
  const owner = m.owner.username;
  const ownerBasic = basicOf(owner, m.owner.password);
  const ownerToken = (await call('POST', `/users/${owner}/tokens`, { name: 'bench' }, ownerBasic)).sha1 as string;
  const rootToken = (await call('POST', '/users/root/tokens', { name: 'bench' }, basicOf('root', PASSWORD))).sha1 as string;
  const auth = `token ${ownerToken}`;
  const orgId = (await call('GET', `/orgs/${org}`, undefined, auth)).id as number;
  const { teamId, roleId } = await addTeamsAndRole(base, org, ownerToken);
  // The owner is a member of the Owners team, so the team routes answer for a member, too.
  const teams = (await call('GET', `/orgs/${org}/teams?limit=50`, undefined, auth)) as { id: number; name: string }[];
  const owners = teams.find((t) => t.name === 'Owners');
  // The organization's avatar as a signed object URL: the objects route's key, expiry and signature.
  const avatar = new URL((await call('GET', `/orgs/${org}/avatar/`, undefined, auth)) as string);
  const clientOrg =
    m.sharedGatewayClientOrg === undefined
      ? undefined
      : ((await call('GET', `/user/client/${m.sharedGatewayClientOrg}`, undefined, `token ${rootToken}`)) as { username: string });
  // A service account of the organization and one of the site, so their routes have an account to name.
  const orgAccount = (await call('POST', `/orgs/${org}/service-accounts`, { name: 'bench-ci' }, auth)).id as number;
  const siteAccount = (await call('POST', '/admin/service-accounts', { name: 'bench-site-ci' }, `token ${rootToken}`)).id as number;
  const u = m.usage;
  const defined = (o: Record<string, string | number | undefined>) =>
    Object.fromEntries(Object.entries(o).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])));
  return {
    params: defined({
      orgname: org,
      username: owner,
      owner: org,
      teamid: owners?.id,
      objectType: 'organization',
      objID: orgId,
      cluster: m.hub.name,
      clusterset: m.outdatedClusterSet,
      // A feature of the cluster sets' catalog (docs/cluster-sets.md).
      feature: 'platform-agent',
      clusterID: m.hub.uid,
      uidcid: `${orgId}.${m.hub.uid}`,
      // What a Prometheus client behind the metrics proxy asks.
      path: 'api/v1/query_range',
      key: avatar.pathname.replace(/^\/api\/v1\/objects\//, ''),
      year: u?.year,
      month: u?.month,
      productKey: u?.product,
      clusterUID: u?.cid,
      objectID: u?.objectID,
      uid: u?.uid,
      cid: u?.cid,
      lid: u?.lid,
      productName: u?.product,
      namespaceName: u?.namespace,
    }),
    byPath: [
      [/^\/authz\/roles\/:id/, { id: String(roleId) }],
      [/^\/orgs\/:orgname\/service-accounts\/:id/, { id: String(orgAccount) }],
      [/^\/admin\/service-accounts\/:id/, { id: String(siteAccount) }],
      [/^\/(user\/)?contracts\/:id/, defined({ id: m.quotaExceeded?.contractID })],
      [/^\/user\/client\/:id/, defined({ id: m.sharedGatewayClientOrg })],
      [/^\/user\/client\/:orgname/, defined({ orgname: clientOrg?.username })],
      [
        /^\/objects\//,
        defined({ expires: avatar.searchParams.get('expires') ?? undefined, signature: avatar.searchParams.get('signature') ?? undefined }),
      ],
    ],
    query: defined({ key: u?.eventKey, version: u?.eventVersion }),
    absent: {
      marketplace: 'a Hosted deployment has no marketplace subscription (the demo seeds one on marketplace deployments only)',
      subscriptionId: 'a Hosted deployment has no marketplace subscription (the demo seeds one on marketplace deployments only)',
    },
    ownerToken,
    rootToken,
    ownerBasic,
    allowedBody: JSON.stringify([
      { objectType: 'organization', objectID: orgId },
      { objectType: 'team', objectID: teamId },
    ]),
  };
}

interface Measured {
  /** 2xx answers a second: an error answer is not counted as served. */
  rps: number;
  p99: number;
  /** Answers other than 2xx, and socket errors and timeouts. */
  errors: number;
  /** The answers other than 2xx by status (`3 × 404`), empty when none. */
  errorStatuses: string;
  /** Answers of any status: none means the route did not answer within the measurement. */
  answered: number;
  /** CPU per answer, in µs, of the processes measured (the server's, not the load generator's). */
  cpuUs?: number;
}

/** Load on `c` against `base` for `duration` seconds: autocannon's result. */
export function load(base: string, c: Call, duration: number, rate?: { connections: number; overallRate: number }) {
  const { next, onAnswer } = c;
  return autocannon({
    url: `${base}${c.url}`,
    method: c.method,
    headers: c.headers,
    body: c.body,
    connections: rate?.connections ?? c.connections ?? CONNECTIONS,
    overallRate: rate?.overallRate,
    duration,
    requests:
      next || onAnswer
        ? [
            {
              setupRequest: next
                ? (req) => {
                    const n = next();
                    return { ...req, path: n.url, body: n.body };
                  }
                : undefined,
              onResponse: onAnswer ? (status, body) => onAnswer(status, body) : undefined,
            },
          ]
        : undefined,
  });
}

/** One measurement of `c` against `base`, with the CPU `pids` used meanwhile per answer. */
async function measure(base: string, c: Call, pids: () => number[] | Promise<number[]>, duration = DURATION_S): Promise<Measured> {
  const counted = await pids();
  const cpuBefore = cpuSeconds(counted);
  const result = await load(base, c, duration);
  const cpuAfter = cpuSeconds(counted);
  const cpu = cpuBetween(cpuBefore, cpuAfter);
  const answered = result['2xx'] + result.non2xx;
  if (CPU_BY_PROCESS) progress(`${c.label}: CPU µs a request by process: ${cpuByProcess(cpuBefore, cpuAfter, answered)}`);
  return {
    rps: result['2xx'] / result.duration,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    errorStatuses: Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => !status.startsWith('2'))
      .map(([status, { count }]) => `${count} × ${status}`)
      .join(', '),
    answered,
    cpuUs: answered > 0 ? Math.round((cpu * 1e6) / answered) : undefined,
  };
}

interface Row {
  mode: string;
  route: string;
  as: string;
  target: number | undefined;
  /** CPU per request the route may cost, in µs, where one is set. */
  cpuTarget?: number;
  /** The answer to one call before measuring: its status and, when not 2xx, the start of its body. */
  status: number;
  answer?: string;
  /** What one call cost inside the platform (one process only: the others' counters are in their own processes). */
  work?: Work;
  /** The size of the route's answer (its JSON before compression); the bare handler's is under 100 bytes. */
  bytes?: number;
  bare?: Measured;
  platform?: Measured;
  ratio?: number;
  /** The load beside the platform's measurement (the reads-under-writes row): its 2xx answers a second. */
  besideRps?: number;
  /** What the row was compared with, where not bare Express (Call's `against`). */
  against?: Call['against'];
}

/**
 * The round a row reports: the median of its rounds by share of bare (the lower middle one of an even count), not
 * the best, so one lucky round on a machine whose load comes and goes does not stand for the row.
 */
function medianRound<T>(rounds: readonly T[], share: (round: T) => number): T {
  const sorted = [...rounds].sort((a, b) => share(a) - share(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** What one request costs inside the platform: database statements, calls between apps, authorization checks. */
interface Work {
  statements: number;
  rpcs: number;
  checks: number;
}

/** The platform's own counters of work done (the one process's /metrics): statements, RPCs and checks so far. */
async function workSoFar(base: string): Promise<Work> {
  const res = await fetch(`${base}/metrics`);
  const text = res.ok ? await res.text() : '';
  const sum = (name: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
      .reduce((acc, l) => acc + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return {
    // A read the embedded database's result cache answered ran no statement.
    statements: sum('db_query_duration_seconds_count') - sum('db_result_cache_hits_total'),
    rpcs: sum('grpc_client_handled_total'),
    checks: sum('authz_checks_total'),
  };
}

/**
 * A few calls, to see what the route answers with this data before it is measured (the first call's answer),
 * and what each call costs inside the platform (read from its /metrics around batches of calls made after the
 * first ones have filled the caches a steady load finds full; nothing else calls the platform meanwhile).
 */
/** One call of a route, as the measurement makes it. */
async function callRoute(base: string, c: Call): Promise<Response> {
  const { url, body } = c.next?.() ?? c;
  const res = await fetch(`${base}${url}`, { method: c.method, headers: c.headers, body, redirect: 'manual' });
  if (!c.onAnswer) return res;
  const text = await res.text();
  c.onAnswer(res.status, text);
  return new Response([204, 205, 304].includes(res.status) ? null : text, { status: res.status, headers: res.headers });
}

async function probe(base: string, c: Call): Promise<{ status: number; answer?: string; work?: Work; bytes: number }> {
  const call = () => callRoute(base, c);
  const res = await call();
  const text = await res.text();
  if (res.status >= 200 && res.status < 300) {
    for (let i = 1; i < (c.warmCalls ?? WARM_CALLS); i++) await (await call()).arrayBuffer();
    // The process's counters also count its own background work (outbox relays, polls), now and then: of a few
    // batches of calls, the least each counter moved is what the calls cost.
    const batches: Work[] = [];
    for (let b = 0; b < WORK_BATCHES; b++) {
      const before = await workSoFar(base);
      for (let i = 0; i < WORK_CALLS; i++) await (await call()).arrayBuffer();
      const after = await workSoFar(base);
      batches.push({
        statements: (after.statements - before.statements) / WORK_CALLS,
        rpcs: (after.rpcs - before.rpcs) / WORK_CALLS,
        checks: (after.checks - before.checks) / WORK_CALLS,
      });
    }
    const least = (k: keyof Work) => Math.min(...batches.map((w) => w[k]));
    return {
      status: res.status,
      work: { statements: least('statements'), rpcs: least('rpcs'), checks: least('checks') },
      bytes: Buffer.byteLength(text),
    };
  }
  let answer = text;
  try {
    answer = (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    // not JSON: the text as it is
  }
  return { status: res.status, answer: answer.replace(/\s+/g, ' ').slice(0, 120), bytes: Buffer.byteLength(text) };
}

/** Prints the statements one more call of `c` runs (and whatever background work ran beside it). */
async function showStatements(base: string, statements: string[], c: Call, step: string): Promise<void> {
  const from = statements.length;
  await (await callRoute(base, c)).arrayBuffer();
  await new Promise((r) => setTimeout(r, 50)); // the debug lines arrive on the child's stderr after the answer
  progress(
    `${step}: statements of one call:${
      statements
        .slice(from)
        .map((s) => `\n    ${s.slice(0, 4000)}`)
        .join('') || ' none'
    }`,
  );
}

/** The bare servers of one run: Express (what rows are compared with), node:http and Fastify. */
type Bares = Record<BareKind, Bare>;

/** What a mode's bare servers answered, each measured once on the mode's first call, shown above its table. */
interface Baseline {
  kind: BareKind;
  measured: Measured;
}

/**
 * A route's share target: by design none; named in TARGETS; else a GET making at most one call and no statement
 * LEAN_GET, any other GET EVERY_GET. Without counts (a separate run alone) a GET is judged as lean.
 */
function targetOf(mode: string, label: string, method: string, work: Work | undefined): number | undefined {
  if (byDesign(label)) return undefined;
  const named = TARGETS[mode]?.[label];
  if (named !== undefined || method !== 'GET') return named;
  return !work || (work.statements === 0 && work.rpcs <= 1) ? LEAN_GET[mode] : EVERY_GET[mode];
}

/** Each bare server measured once on `c`, with its CPU per answer. */
async function baselines(bares: Bares, c: Call): Promise<Baseline[]> {
  const out: Baseline[] = [];
  for (const [kind, bare] of Object.entries(bares) as [BareKind, Bare][])
    out.push({ kind, measured: await measure(bare.base, c, () => bare.pids()) });
  progress(`bare handlers: ${out.map((b) => `${b.kind} ${Math.round(b.measured.rps)} req/s, ${b.measured.cpuUs} µs CPU`).join('; ')}`);
  return out;
}

/**
 * Every call measured against the platform, each paired with bare Express just before it. `works`: what each route
 * costs on `npm start`, for the separate processes' targets.
 */
async function measureAll(
  mode: string,
  platform: Platform,
  bares: Bares,
  calls: Call[],
  works?: Map<string, Work | undefined>,
  writeBares?: WriteBares,
): Promise<{ rows: Row[]; baselines: Baseline[] }> {
  const rows: Row[] = [];
  const reads = calls.filter((c) => !c.against);
  const measuredBaselines =
    WORK_ONLY || reads.length === 0 ? [] : await baselines(bares, reads.find((c) => c.label === ORG_GET) ?? reads[0]);
  for (const [i, c] of calls.entries()) {
    const step = `${mode} ${i + 1}/${calls.length} ${c.label} (${c.as})`;
    const seen = await probe(platform.base, c);
    const work = mode === EMBEDDED ? seen.work : works?.get(`${c.label}|${c.as}`);
    const target = targetOf(mode, c.label, c.method, work);
    const cpuTarget = CPU_TARGETS_US[mode]?.[c.label];
    if (platform.statements) await showStatements(platform.base, platform.statements, c, step);
    if (seen.status < 200 || seen.status >= 300) {
      progress(`${step}: answers ${seen.status} (${seen.answer}); not measured`);
      rows.push({ mode, route: c.label, as: c.as, target, cpuTarget, against: c.against, ...seen });
      continue;
    }
    if (WORK_ONLY) {
      progress(`${step}: ${workCell(seen.work)} statements / RPCs / checks per request`);
      continue;
    }
    // What the row is compared with: bare Express, a bare write (bench/writes.ts), or the platform itself unloaded.
    const bare: Bare = c.against === 'alone' ? { ...platform, stop: () => undefined } : c.against ? writeBares![c.against] : bares.express;
    // The platform's answers alone feed a row's `onAnswer` (a bare handler's token is no token of the platform's).
    const bareCall: Call = { ...c, onAnswer: undefined };
    if (WARM_S > 0) {
      await load(bare.base, bareCall, WARM_S);
      await load(platform.base, c, WARM_S);
    }
    const rounds: Row[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const b = await measure(bare.base, bareCall, () => bare.pids());
      const [p, besideRps] = await Promise.all([measure(platform.base, c, () => platform.pids()), c.beside?.(DURATION_S)]);
      const row: Row = {
        mode,
        route: c.label,
        as: c.as,
        target,
        cpuTarget,
        status: seen.status,
        work: mode === EMBEDDED ? seen.work : undefined,
        bytes: seen.bytes,
        bare: b,
        platform: p,
        ratio: p.rps / b.rps,
        besideRps,
        against: c.against,
      };
      rounds.push(row);
    }
    const median = medianRound(rounds, (r) => r.ratio!);
    rows.push(median);
    progress(
      `${step}: ${(median.ratio! * 100).toFixed(1)}% of ${c.against ?? 'bare'} (${Math.round(median.platform!.rps)} req/s against ${Math.round(median.bare!.rps)}), ` +
        `p99 ${median.platform!.p99} ms, ${median.platform!.cpuUs} µs CPU per request` +
        (median.besideRps === undefined ? '' : `, ${median.besideRps.toFixed(1)} writes/s beside it`) +
        (median.platform!.errors
          ? `, ${median.platform!.errors} errors${median.platform!.errorStatuses ? ` (${median.platform!.errorStatuses})` : ''}`
          : ''),
    );
  }
  return { rows, baselines: measuredBaselines };
}

const wanted = (label: string) => !FILTER || FILTER.test(label);

/** Every GET row registered on the deployment, filled from the demo data, and the allowed-permissions POST. */
async function everyCall(platform: Platform, mode: string): Promise<{ calls: Call[]; skipped: Skipped[] }> {
  const fill = await demoFill(platform.base, platform.manifest!);
  const registered = registeredRoutesOn(DEPLOYMENT).filter((r) => r.method === 'get');
  const planned = registered.map((r) => plan(r, fill));
  const reads = [...planned.filter((c): c is Call => !isSkipped(c)), allowedPermissions(fill)];
  const skipped = [...planned.filter(isSkipped), ...gatedOut(registered)].filter((s) => wanted(s.label));
  const teamsList = reads.find((c) => c.label === TEAMS_LIST)!;
  // The writes last: what they add (organizations, teams, users) is then in no GET row's answer.
  const writes = await writeCalls(
    {
      base: platform.base,
      owner: platform.manifest!.owner.username,
      ownerToken: fill.ownerToken,
      ownerBasic: fill.ownerBasic,
      rootToken: fill.rootToken,
      teamsList,
    },
    wanted,
  );
  const calls = [...reads.filter((c) => wanted(c.label)), ...writes];
  progress(
    `${mode}: ${registered.length} GET routes registered; measuring ${calls.length} calls (${writes.length} write rows), ${skipped.length} not measured`,
  );
  return { calls, skipped };
}

/** What a mode measured: its rows and its bare servers' line. */
interface ModeResult {
  rows: Row[];
  baselines: Baseline[];
}

async function benchEmbedded(bares: Bares, writeBares: WriteBares | undefined): Promise<ModeResult & { skipped: Skipped[] }> {
  progress(`${EMBEDDED}: starting the platform with the demo data`);
  const platform = await startEmbedded();
  try {
    const { calls, skipped } = await everyCall(platform, EMBEDDED);
    return { ...(await measureAll(EMBEDDED, platform, bares, calls, undefined, writeBares)), skipped };
  } finally {
    await platform.stop();
  }
}

async function benchSeparate(bares: Bares, works: Map<string, Work | undefined>, writeBares: WriteBares | undefined): Promise<ModeResult> {
  progress(`${SEPARATE}: starting one process per app`);
  const platform = await startSeparate();
  try {
    const calls = await everyCall(platform, SEPARATE);
    return await measureAll(SEPARATE, platform, bares, calls.calls, works, writeBares);
  } finally {
    await platform.stop();
  }
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const cell = (s: string) => s.replace(/\|/g, '\\|');

const workCell = (w: Work | undefined) =>
  w ? [w.statements, w.rpcs, w.checks].map((n) => (Number.isInteger(n) ? String(n) : n.toFixed(1))).join(' / ') : '—';

/** A row's work as the one process of `npm start` counted it (the separate processes count in their own). */
type WorkOf = (r: Row) => Work | undefined;

const plural = (n: number, one: string, many: string) => `${Number.isInteger(n) ? n : n.toFixed(1)} ${n === 1 ? one : many}`;

/** The median share of bare of a mode's measured rows, by the calls between apps each makes (none with statements). */
function mediansByCalls(rows: Row[], workOf: WorkOf): Map<number, number> {
  const byCalls = new Map<number, number[]>();
  for (const r of rows) {
    const w = workOf(r);
    if (r.ratio === undefined || !w || w.statements > 0) continue;
    const k = Math.round(w.rpcs);
    byCalls.set(k, [...(byCalls.get(k) ?? []), r.ratio]);
  }
  return new Map(
    [...byCalls].map(([k, shares]) => {
      const sorted = shares.sort((a, b) => a - b);
      return [k, sorted[Math.floor(sorted.length / 2)]];
    }),
  );
}

/**
 * Why a row measured below its target, from what the platform counted for it: the statements that reached the
 * database, else the calls between apps (with the median share of the rows that make as many), else the gateway's
 * own work (authentication, checks from memory, the answer's JSON and its log line).
 */
function shortfall(r: Row, work: Work | undefined, medians: Map<number, number>): string {
  if (r.target === undefined || r.ratio === undefined || r.ratio >= r.target) return '';
  const reasons: string[] = [];
  // An answer this large costs its JSON, its compression and its bytes on the socket, against the bare handler's few.
  if ((r.bytes ?? 0) >= LARGE_ANSWER_BYTES) reasons.push(`an answer of ${Math.round(r.bytes! / 1024)} KB`);
  if (work && work.statements >= 1) reasons.push(`${plural(work.statements, 'statement', 'statements')} a request reach the database`);
  const k = work ? Math.round(work.rpcs) : 0;
  if (k >= 1) {
    const median = medians.get(k);
    reasons.push(`${plural(k, 'call', 'calls')} between apps${median === undefined ? '' : ` (median of such rows ${pct(median)})`}`);
  }
  if (reasons.length === 0) reasons.push(work ? "no statement, no call: the gateway's own work" : '—');
  return reasons.join('; ');
}

/** An answer from this size on is named as a reason (the bare handler answers under 100 bytes). */
const LARGE_ANSWER_BYTES = 8 * 1024;

/** Rows slowest first: those that answered an error first of all, then by their share of bare. */
function table(rows: Row[], workOf: WorkOf): string {
  const sorted = [...rows].sort((a, b) => (a.ratio ?? -1) - (b.ratio ?? -1));
  const medians = mediansByCalls(rows, workOf);
  const lines = [
    '| route | as | bare req/s | platform req/s | ratio | target | p99 platform / bare (ms) | CPU µs a request platform / bare | errors | statements / RPCs / checks per request | below target because |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of sorted) {
    const target = r.target === undefined ? (byDesign(r.route) ?? '—') : `${(r.target * 100).toFixed(0)}%`;
    if (r.ratio === undefined) {
      lines.push(
        `| ${r.route} | ${r.as} | — | — | **answers ${r.status}**: ${cell(r.answer ?? '')} | ${target}${r.target === undefined ? '' : ' **not met**'} | — | — | — | — | — |`,
      );
      continue;
    }
    const met = r.target === undefined ? '' : r.ratio >= r.target ? ' met' : ' **not met**';
    const p = r.platform!;
    lines.push(
      `| ${r.route} | ${r.as} | ${Math.round(r.bare!.rps)} | ${Math.round(p.rps)} | ${p.answered ? pct(r.ratio) : `**no answer in ${DURATION_S} s**`} | ` +
        `${target}${met} | ${p.answered ? p.p99 : '—'} / ${r.bare!.p99} | ${p.cpuUs ?? '—'} / ${r.bare!.cpuUs ?? '—'} | ${p.errors} | ${workCell(workOf(r))} | ${shortfall(r, workOf(r), medians)} |`,
    );
  }
  return lines.join('\n');
}

/** One line on the targets of a mode: how many rows reach theirs, and the CPU targets. */
function summary(rows: Row[]): string {
  const judged = rows.filter((r) => r.target !== undefined);
  const met = judged.filter((r) => r.ratio !== undefined && r.ratio >= r.target!);
  const failing = rows.filter((r) => r.ratio === undefined).length;
  const cpu = rows
    .filter((r) => r.cpuTarget !== undefined)
    .map((r) => {
      const used = r.platform?.cpuUs;
      return `${r.route} ${used ?? '—'} µs of CPU a request (target ≤ ${r.cpuTarget}: ${used !== undefined && used <= r.cpuTarget! ? 'met' : '**not met**'})`;
    });
  return (
    `${met.length} of ${judged.length} rows meet their share target${failing ? `; ${failing} answer an error with the demo data and are not measured` : ''}.` +
    (cpu.length ? ` ${cpu.join('; ')}.` : '')
  );
}

/** The bare servers of a mode, measured on its first call: what the HTTP layer alone answers and costs. */
function baselineLine(baselines: Baseline[]): string {
  if (baselines.length === 0) return '';
  return `Bare handlers in this run: ${baselines
    .map((b) => `${b.kind} ${Math.round(b.measured.rps)} req/s (${b.measured.cpuUs} µs of CPU a request)`)
    .join(', ')}.`;
}

/** What `bench/authz-check.ts` prints. */
interface CheckTimes {
  p50Ms: number;
  p99Ms: number;
  sequentialChecksPerSecond: number;
  concurrentChecksPerSecond: number;
}

/** What `bench/authz-check.ts` prints: the same checks answered from memory (both freshness modes) and from the table. */
interface AuthzCheck {
  tuples: number;
  memoryLocal: CheckTimes;
  memoryStrict: CheckTimes;
  table: CheckTimes;
}

/** The embedded engine's check target (p99), for the tuples in memory (up to AUTHZ_MEMORY_TUPLES_MAX). */
const AUTHZ_P99_TARGET_MS = 0.5;

/** Runs the authz check benchmark (1M tuples, depth 3) in its own process, for its line under the tables. */
function authzCheck(): AuthzCheck {
  progress('authz check at 1M tuples (bench/authz-check.ts)');
  const res = spawnSync(process.execPath, [require.resolve('tsx/cli'), '--tsconfig', 'tsconfig.base.json', 'bench/authz-check.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (res.status !== 0) throw new Error(`bench/authz-check.ts failed (${res.status})`);
  return JSON.parse(res.stdout) as AuthzCheck;
}

const AUTHZ_LINE = 'Embedded authz engine (bench/authz-check.ts)';

function authzLine(a: AuthzCheck): string {
  const times = (t: CheckTimes) =>
    `p99 ${t.p99Ms} ms (p50 ${t.p50Ms} ms), ${t.sequentialChecksPerSecond} checks/s sequential, ${t.concurrentChecksPerSecond} with 8 concurrent`;
  const m = a.memoryLocal;
  return (
    `${AUTHZ_LINE}: a check at ${a.tuples.toLocaleString('en')} tuples, depth 3, from memory (as authz keeps them up to AUTHZ_MEMORY_TUPLES_MAX, set past them here): ` +
    `${times(m)}; target p99 ≤ ${AUTHZ_P99_TARGET_MS} ms ${m.p99Ms <= AUTHZ_P99_TARGET_MS ? 'met' : '**not met**'}. ` +
    `With a read of the change log before each check (several processes on one Postgres): ${times(a.memoryStrict)}. ` +
    `From the tuple table alone: ${times(a.table)}.`
  );
}

/**
 * The engine's line of the last run that measured it, kept when this run did not (it needs a 1M-tuple database),
 * as that run wrote it.
 */
function previousAuthzLine(): string | undefined {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'benchmarks.md'), 'utf8');
  const block = doc.slice(doc.indexOf('<!-- bench http: begin -->'), doc.indexOf('<!-- bench http: end -->'));
  return block.split('\n').find((l) => l.startsWith(AUTHZ_LINE));
}

/** This run's tables, as docs/benchmarks.md shows them. */
function tablesOf(
  { rows: embedded, baselines: embeddedBaselines, skipped }: ModeResult & { skipped: Skipped[] },
  { rows: separate, baselines: separateBaselines }: ModeResult,
  authz: string | undefined,
): string {
  // The separate processes' rows borrow the counts of the same route on `npm start`: the same calls between apps.
  const counted = new Map(embedded.map((r) => [`${r.route}|${r.as}`, r.work]));
  const isWrite = (r: Row) => r.route.endsWith(WRITES_TAG);
  const writes = [...embedded.filter(isWrite), ...separate.filter(isWrite)];
  embedded = embedded.filter((r) => !isWrite(r));
  separate = separate.filter((r) => !isWrite(r));
  const parts = [
    runLine(
      `${CONNECTIONS} connections, ${DURATION_S} s per measurement after ${WARM_CALLS} calls and ${WARM_S} s of load on each side, ` +
        `${ROUNDS === 1 ? 'one paired round' : `the median of ${ROUNDS} paired rounds`}; ` +
        `${DEPLOYMENT.DEPLOYMENT_TYPE} deployment, billing on, RUN_MODE=dev, demo data (DEMO_SEED_MANIFEST).`,
    ),
  ];
  if (embedded.length)
    parts.push(
      `**${EMBEDDED}**, every GET route registered and the allowed-permissions POST, slowest first. ${summary(embedded)} ` +
        baselineLine(embeddedBaselines),
      table(embedded, (r) => r.work),
    );
  if (skipped.length)
    parts.push(
      `Not measured:\n\n${skipped
        .sort((a, b) => a.label.localeCompare(b.label))
        .map((s) => `- ${s.label}: not measured: ${s.why}`)
        .join('\n')}`,
    );
  if (separate.length)
    parts.push(
      `**${SEPARATE}**. ${summary(separate)} The statements / RPCs / checks are those counted for the same route on \`npm start\`; ` +
        `CPU counts every process of the platform, its own NATS server's and its Postgres backends'. ${baselineLine(separateBaselines)}`,
      table(separate, (r) => counted.get(`${r.route}|${r.as}`)),
    );
  if (writes.length)
    parts.push(
      `**Writes** (${WRITE_CONNECTIONS_NOTE}), each against its own baseline. ${summary(writes)}`,
      writesTable(writes, (r) => counted.get(`${r.route}|${r.as}`)),
    );
  if (authz) parts.push(authz);
  return parts.join('\n\n');
}

const WRITE_CONNECTIONS_NOTE = '8 connections; the teams list 32, with 20 team creates a second in another organization beside it';

/** What a write row is compared with, as its table names it. */
const AGAINST: Record<NonNullable<Call['against']>, string> = {
  insert: 'bare INSERT ... RETURNING (Postgres)',
  scrypt: 'bare scrypt',
  alone: 'itself without the writes',
};

/** The write rows of both topologies, in their order, each with its baseline, share, target and what it cost. */
function writesTable(rows: Row[], workOf: WorkOf): string {
  const lines = [
    '| topology | row | baseline | baseline req/s | platform req/s | share | target | p99 platform / baseline (ms) | CPU µs a request platform / baseline | errors | statements / RPCs / checks per request |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const route = r.route.slice(0, -WRITES_TAG.length).trim();
    const against = AGAINST[r.against ?? 'alone'];
    const target = r.target === undefined ? '—' : `${(r.target * 100).toFixed(0)}%`;
    if (r.ratio === undefined) {
      lines.push(
        `| ${r.mode} | ${route} | ${against} | — | — | **answers ${r.status}**: ${cell(r.answer ?? '')} | ${target} | — | — | — | — |`,
      );
      continue;
    }
    const met = r.target === undefined ? '' : r.ratio >= r.target ? ' met' : ' **not met**';
    const p = r.platform!;
    const beside = r.besideRps === undefined ? '' : ` (writes beside: ${r.besideRps.toFixed(1)}/s)`;
    lines.push(
      `| ${r.mode} | ${route}${beside} | ${against} | ${Math.round(r.bare!.rps)} | ${Math.round(p.rps)} | ${pct(r.ratio)} | ${target}${met} | ` +
        `${p.p99} / ${r.bare!.p99} | ${p.cpuUs ?? '—'} / ${r.bare!.cpuUs ?? '—'} | ${p.errors}${p.errorStatuses ? ` (${p.errorStatuses})` : ''} | ${workCell(r.work ?? workOf(r))} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const modes = (process.argv[2] ?? 'embedded,separate,authz').split(',');
  const started = Date.now();
  const bares = {} as Bares;
  let writeBares: Awaited<ReturnType<typeof startWriteBares>> | undefined;
  let embedded: ModeResult & { skipped: Skipped[] } = { rows: [], baselines: [], skipped: [] };
  let separate: ModeResult = { rows: [], baselines: [] };
  try {
    for (const kind of Object.keys(BARE_SERVERS) as BareKind[]) bares[kind] = await startBare(kind);
    if (Object.values(WRITE_ROWS).some(wanted)) writeBares = await startWriteBares(PG_SERVER);
    if (modes.includes('embedded')) embedded = await benchEmbedded(bares, writeBares);
    const works = new Map(embedded.rows.map((r) => [`${r.route}|${r.as}`, r.work]));
    if (modes.includes('separate')) separate = await benchSeparate(bares, works, writeBares);
  } finally {
    for (const bare of Object.values(bares)) bare.stop();
    await writeBares?.stop();
  }
  const authz = modes.includes('authz') ? authzCheck() : undefined;
  progress(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const tables = tablesOf(embedded, separate, authz ? authzLine(authz) : previousAuthzLine());
  if (WORK_ONLY) progress('BENCH_WORK_ONLY is set: docs/benchmarks.md is left as it is');
  else if (FILTER)
    process.stderr.write(
      `${tables}\n\n[bench http] BENCH_ROUTES is set: the tables above are this run's; docs/benchmarks.md is left as it is\n`,
    );
  else writeDocBlock('http', tables);
  process.stdout.write(
    `${JSON.stringify({ rows: [...embedded.rows, ...separate.rows], baselines: { embedded: embedded.baselines, separate: separate.baselines }, skipped: embedded.skipped, authz }, null, 2)}\n`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
