import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { chartMemoryLimits, memoryCgroup, type MemoryCgroup } from './pod-limits';
import { freePort, runPlatform, waitFor } from './support';

// The chart's topology on one host: one process per app, each from its bundle as the image runs it, on the Postgres
// database and NATS server the caller names. Used by the http bench (its `separate` mode) and the import bench.

/** The backends, in the order they start: authz first, as the others write relationships at start. */
export const APPS = ['authz', 'orgs-teams', 'contracts-licensing', 'billing-dashboard', 'metricsproxy', 'clusters', 'marketplace-listener'];

/** The setting that tells every app where each backend listens. */
export const ADDR_VARS: Record<string, string> = {
  authz: 'AUTHZ_GRPC_ADDR',
  'orgs-teams': 'ORGS_TEAMS_GRPC_ADDR',
  'contracts-licensing': 'CONTRACTS_LICENSING_GRPC_ADDR',
  'billing-dashboard': 'BILLING_DASHBOARD_GRPC_ADDR',
  metricsproxy: 'METRICSPROXY_GRPC_ADDR',
  clusters: 'CLUSTERS_GRPC_ADDR',
  'marketplace-listener': 'MARKETPLACE_LISTENER_GRPC_ADDR',
};

export interface AppProcesses {
  /** The gateway's HTTP base URL. */
  base: string;
  /** What every app was started with: the caller's settings, the addresses and the apps' shared keys. */
  env: Record<string, string>;
  /** The backends' gRPC ports by app. */
  ports: Record<string, number>;
  /** The running processes by app, the gateway included. */
  processes: Map<string, ChildProcess>;
  /** Each app's `/metrics` port (METRICS_PORT), the gateway included. */
  metricsPorts: Record<string, number>;
  /** Each app's memory limit in bytes, its pod's, when the apps run in memory cgroups (pod-limits.ts); else empty. */
  memoryLimits: Record<string, number>;
  /** Stops every app (SIGTERM) and waits for each to exit. */
  stop(): Promise<void>;
}

/**
 * Starts the seven backends and the gateway with `settings` (DATABASE_URL, NATS_URL, DATA_DIR, the admin and the
 * deployment), and answers once the gateway answers. `say` hears of an app that exits before `stop` is asked.
 * `staggerMs` (default 4 s) is waited after authz and after orgs-teams, so that on an empty database authz's and
 * then orgs-teams' migrations and first writes are done before the apps that call them start; 0 starts every app
 * at once, as a rollout of the chart on an existing database does. Each app runs in a memory cgroup of its pod's
 * limit when this host lets us make one (pod-limits.ts); `say` hears once when it does not.
 */
export async function startAppProcesses(
  settings: Record<string, string>,
  say: (msg: string) => void,
  { staggerMs = 4000 }: { staggerMs?: number } = {},
): Promise<AppProcesses> {
  const ports: Record<string, number> = {};
  for (const app of APPS) ports[app] = await freePort();
  const env: Record<string, string> = {
    ...settings,
    // The apps call each other as one release: the chart gives every pod the same keys (docs/grpc.md).
    PLATFORM_APP_KEYS: randomBytes(32).toString('base64'),
    ...Object.fromEntries(APPS.map((a) => [ADDR_VARS[a], `127.0.0.1:${ports[a]}`])),
  };
  const processes = new Map<string, ChildProcess>();
  const metricsPorts: Record<string, number> = {};
  for (const app of [...APPS, 'gateway']) metricsPorts[app] = await freePort();
  let stopping = false;
  const watch = (app: string, child: ChildProcess) => {
    processes.set(app, child);
    // Their logs go where the caller's LOG_LEVEL lets them: an app that stops says so, rather than leaving the run waiting.
    child.once('exit', (code, signal) => {
      if (!stopping) say(`${app} exited (${signal ?? code}); run it by hand with this run's environment to see why`);
    });
  };
  const listenerHttp = await freePort();
  const cgroups = podCgroups(say);
  const memoryLimits = Object.fromEntries([...cgroups].map(([app, c]) => [app, c.bytes]));
  const removeCgroups = () => {
    for (const c of cgroups.values()) c.cgroup.remove();
  };
  const killAll = () => {
    stopping = true;
    for (const child of processes.values()) child.kill('SIGTERM');
  };
  try {
    for (const app of APPS) {
      watch(
        app,
        runPlatform(
          `dist/apps/${app}/main.js`,
          {
            ...env,
            GRPC_PORT: String(ports[app]),
            // Each pod has its own 9464; here they share one host.
            METRICS_PORT: String(metricsPorts[app]),
            MARKETPLACE_HTTP_PORT: String(listenerHttp),
          },
          undefined,
          cgroups.get(app)?.cgroup.procs,
        ),
      );
      if (staggerMs && (app === 'authz' || app === 'orgs-teams')) await new Promise((r) => setTimeout(r, staggerMs));
    }
    const httpPort = await freePort();
    const gateway = runPlatform(
      'dist/apps/gateway/main.js',
      {
        ...env,
        GRPC_PORT: String(await freePort()),
        METRICS_PORT: String(metricsPorts.gateway),
        HTTP_PORT: String(httpPort),
        MARKETPLACE_LISTENER_HTTP_URL: `http://127.0.0.1:${listenerHttp}`,
      },
      undefined,
      cgroups.get('gateway')?.cgroup.procs,
    );
    watch('gateway', gateway);
    const base = `http://127.0.0.1:${httpPort}`;
    await waitFor(`${base}/api/v1/version`, gateway);
    return {
      base,
      env,
      ports,
      processes,
      metricsPorts,
      memoryLimits,
      async stop() {
        killAll();
        await Promise.all(
          [...processes.values()].map((c) =>
            c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined,
          ),
        );
        removeCgroups();
      },
    };
  } catch (err) {
    // A platform that does not come up leaves no process behind (one would hold its ports for the next run).
    killAll();
    removeCgroups();
    throw err;
  }
}

let cgroupRuns = 0;

/** A memory cgroup per app of its pod's limit, or none at all when this host does not let us make them. */
function podCgroups(say: (msg: string) => void): Map<string, { cgroup: MemoryCgroup; bytes: number }> {
  const made = new Map<string, { cgroup: MemoryCgroup; bytes: number }>();
  // BENCH_POD_LIMITS=off: the host's memory for every app, to compare.
  if (process.env.BENCH_POD_LIMITS === 'off') return made;
  const run = `platform-bench-${process.pid}-${++cgroupRuns}`;
  for (const [app, bytes] of Object.entries(chartMemoryLimits())) {
    if (app !== 'gateway' && !APPS.includes(app)) continue;
    const cgroup = memoryCgroup(`${run}-${app}`, bytes);
    if (!cgroup) {
      for (const c of made.values()) c.cgroup.remove();
      say(
        "no memory cgroup could be made here (root on cgroup v1 or v2 can): the apps' heaps are sized by this host's memory, not their pods' limits",
      );
      return new Map();
    }
    made.set(app, { cgroup, bytes });
  }
  return made;
}
