import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { ROOT } from './support';

// The chart gives every app's pod a memory limit (resources.limits.memory in deploy/helm/platform/values.yaml), and
// Node sizes V8's heap from the limit of the cgroup it runs in: in a 512 MiB pod the heap may grow to about 350 MB,
// on this host to about 4 GB, so V8 collects far later here and a process's RSS says little about its pod's. The
// chart-topology benches run each app in a memory cgroup of its pod's limit, when this host lets them make one (as
// root, on cgroup v1 or v2), so that V8 sizes its heap as in the pod and a process over its limit is killed as there.

/** Each app's memory limit in bytes, as the chart's default values give it. */
export function chartMemoryLimits(): Record<string, number> {
  const values = parse(fs.readFileSync(path.join(ROOT, 'deploy/helm/platform/values.yaml'), 'utf8')) as {
    apps: Record<string, { resources?: { limits?: { memory?: string } } }>;
  };
  return Object.fromEntries(
    Object.entries(values.apps).flatMap(([app, v]) => {
      const limit = v.resources?.limits?.memory;
      return limit ? [[app, bytesOf(limit)]] : [];
    }),
  );
}

/** A Kubernetes quantity of memory (`512Mi`, `1Gi`, `500M`, a plain number of bytes) in bytes. */
export function bytesOf(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity.trim());
  if (!m) throw new Error(`not a quantity of memory: ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

/** A memory cgroup a process joins before it execs node (`procs`), removed once its processes are gone. */
export interface MemoryCgroup {
  /** The file a process writes its pid to, to join. */
  procs: string;
  remove(): void;
}

const V2_ROOT = '/sys/fs/cgroup';
const V1_ROOT = '/sys/fs/cgroup/memory';

/** A new memory cgroup limited to `bytes`, or undefined when this host does not let us make one. */
export function memoryCgroup(name: string, bytes: number): MemoryCgroup | undefined {
  const v2 = fs.existsSync(path.join(V2_ROOT, 'cgroup.controllers'));
  const dir = path.join(v2 ? V2_ROOT : V1_ROOT, name);
  try {
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(bytes));
  } catch {
    try {
      fs.rmdirSync(dir);
    } catch {
      // never made
    }
    return undefined;
  }
  return {
    procs: path.join(dir, 'cgroup.procs'),
    remove() {
      try {
        fs.rmdirSync(dir);
      } catch {
        // a process still in it (the kernel refuses); the host's next reboot clears it
      }
    },
  };
}
