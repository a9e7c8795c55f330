// The chart's pods, run from the image with podman as Kubernetes would run them, on this one machine.
//
// - Each Deployment's pods are containers with exactly the rendered command, args, env (the rendered ConfigMap, and
//   Secrets: the chart's own, or the operator's for `existingSecret`), user, read-only root filesystem, dropped
//   capabilities, memory limit and volumes (emptyDir as tmpfs), on one podman network.
// - Each Service is a virtual address, as kube-proxy makes one: an address of this machine (in 198.18.0.0/15, the
//   range set aside for tests) that every pod resolves the Service's name to, forwarding each connection to one of the
//   Service's ready pods, round robin. A pod that is not ready, or is terminating, gets no new connection; the
//   connections it has stay, as they do through kube-proxy.
// - Probes are polled as the kubelet polls them: startup first, then readiness and liveness, each with its period,
//   timeout and failure threshold. gRPC probes ask grpc.health.v1; HTTP probes GET their path. A container that exits
//   before its startup probe passed is started again after the kubelet's back-off, twice at most.
// - Postgres and NATS are the machine's, reached through a forwarder on another such address (the pods cannot reach
//   the machine's loopback).
// - A rolling update is Kubernetes' default (maxSurge 25% rounded up, maxUnavailable 25% rounded down): a new pod
//   ready before an old one is taken out of its Services and sent SIGTERM, which it has its grace period to obey.
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { spawnSync } from 'node:child_process';
import { credentials, makeGenericClientConstructor, type Client, type ServiceDefinition } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import type { Manifest } from '../test/chart';
import { podman, podmanAsync } from './podman';

/** What the test reports as it goes. */
export type Say = (line: string) => void;

/** A Secret the operator made (the chart's `existingSecret`): its keys and values. */
export type Secrets = Record<string, Record<string, string>>;

/** The addresses of this run: Services from .1 up, the machine's own services (Postgres, NATS) on .250 and up. */
const ADDRESS_PREFIX = '198.18.0.';
const MACHINE_ADDRESS = `${ADDRESS_PREFIX}250`;

/** The address Postgres and NATS are reached at from the pods (through forwarders to the machine's own). */
export const MACHINE = MACHINE_ADDRESS;

/** Kubernetes' default grace period, for a pod spec that sets none. */
const DEFAULT_GRACE_S = 30;
/**
 * How long after its SIGTERM a pod still gets new connections through its Services: Kubernetes sends the signal and
 * takes the pod out of its endpoints at the same time, and kube-proxy on every node learns of it a moment later.
 */
const ENDPOINTS_LAG_MS = 1_000;
/** How much of a pod's log is kept, or searched, for the lines of a failed call. */
const DEPARTED_LOG_LINES = 5_000;
/** The kubelet's first back-off before restarting an exited container (it doubles), and how many restarts this test allows. */
const RESTART_BACKOFF_S = 10;
const MAX_RESTARTS = 2;

interface Probe {
  grpc?: { port: number; service?: string };
  httpGet?: { path: string; port: number | string };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
}

/** One pod: its container, address, and what its probes last said. */
export class Pod {
  ip = '';
  started = false;
  ready = false;
  /** Set once it is sent SIGTERM: it gets no new connection from then on. */
  terminating = false;
  /** Set when it exited (or was found dead): its exit code. */
  exitCode: number | undefined;
  /** How often it was started again after exiting before its startup probe passed. */
  restarts = 0;
  /** Set when a liveness probe failed its threshold: Kubernetes would restart it; the test fails. */
  livenessFailed: string | undefined;
  private stopProbes = false;

  constructor(
    readonly name: string,
    readonly deployment: Deployment,
  ) {}

  get labels(): Record<string, string> {
    return this.deployment.template.metadata?.labels ?? {};
  }

  /** The container's port named `name` (a Service's targetPort), or the number itself. */
  port(target: number | string): number {
    if (typeof target === 'number') return target;
    const port = this.deployment.container.ports?.find((p: { name: string }) => p.name === target);
    if (!port) throw new Error(`${this.name}: no port named ${target}`);
    return port.containerPort;
  }

  async start(cluster: Cluster): Promise<void> {
    const args = cluster.runArgs(this.name, this.deployment.template.spec);
    const res = await podmanAsync(['run', '-d', ...args]);
    if (res.code !== 0) throw new Error(`${this.name}: podman run failed: ${res.stderr.trim()}`);
    this.ip = this.address();
  }

  /** Polls the startup probe, then readiness and liveness, until the pod stops; resolves once it is ready. */
  async probe(say: Say): Promise<void> {
    const c = this.deployment.container;
    const startup: Probe | undefined = c.startupProbe;
    const readiness: Probe | undefined = c.readinessProbe;
    const liveness: Probe | undefined = c.livenessProbe;
    if (startup) {
      for (let backoffS = RESTART_BACKOFF_S; !(await this.until(startup, true)); backoffS *= 2) {
        // A container that exits is restarted by the kubelet (a Deployment's restartPolicy is Always), after a
        // back-off of 10 s, doubling: an app that gives up at start (its bus not answering in time on a loaded
        // machine, say) comes back. A few times only here; a probe that runs out of failures fails at once.
        if (!this.exited() || this.restarts >= MAX_RESTARTS)
          throw new Error(`${this.name} never passed its startup probe:\n${this.logs()}`);
        const why = this.logs(1).trim();
        say(
          `${this.name}: exited (${this.exitCode}) before its startup probe passed; restarted in ${backoffS} s, as the kubelet would: ${why}`,
        );
        await sleep(backoffS * 1000);
        await this.restart();
      }
    }
    this.started = true;
    if (liveness)
      void this.watch(liveness, (ok, why) => {
        if (!ok && !this.terminating) {
          this.livenessFailed = why;
          say(`${this.name}: liveness probe failed ${liveness.failureThreshold ?? 3} times (${why}): Kubernetes would restart it`);
        }
      });
    if (!readiness) {
      this.ready = true;
      return;
    }
    // Ready at its first success; then followed, in and out of its Services, until it stops.
    const ok = await this.until(readiness, false);
    if (!ok) throw new Error(`${this.name} never became ready:\n${this.logs()}`);
    this.ready = true;
    void this.watch(readiness, (passing) => {
      if (this.ready !== passing && !this.terminating) say(`${this.name}: ${passing ? 'ready again' : 'not ready'}`);
      this.ready = passing;
    });
  }

  /** The container's address on the cluster's network (podman gives it at each start). */
  private address(): string {
    return podman(['inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', this.name]);
  }

  /** Starts the exited container again, as the kubelet restarts one: same spec, a new address if podman gives one. */
  private async restart(): Promise<void> {
    const res = await podmanAsync(['start', this.name]);
    if (res.code !== 0) throw new Error(`${this.name}: podman start failed: ${res.stderr.trim()}`);
    this.restarts++;
    this.exitCode = undefined;
    this.ip = this.address();
  }

  /** Polls until one success (true), or until the failure threshold (startup) or forever (readiness) runs out. */
  private async until(p: Probe, bounded: boolean): Promise<boolean> {
    await sleep((p.initialDelaySeconds ?? 0) * 1000);
    let failures = 0;
    for (;;) {
      if (this.stopProbes || this.exited()) return false;
      if ((await this.check(p)) === undefined) return true;
      failures++;
      if (bounded && failures >= (p.failureThreshold ?? 3)) return false;
      await sleep((p.periodSeconds ?? 10) * 1000);
    }
  }

  /** Polls every period for as long as the pod runs, calling `report` when the verdict changes (threshold counted). */
  private async watch(p: Probe, report: (ok: boolean, why?: string) => void): Promise<void> {
    let failures = 0;
    let ok = true;
    while (!this.stopProbes) {
      await sleep((p.periodSeconds ?? 10) * 1000);
      if (this.stopProbes) return;
      const why = await this.check(p);
      failures = why === undefined ? 0 : failures + 1;
      const now: boolean = why === undefined ? true : failures >= (p.failureThreshold ?? 3) ? false : ok;
      if (now !== ok) report(now, why);
      ok = now;
    }
  }

  /** One probe: undefined when it passed, else why not. */
  private async check(p: Probe): Promise<string | undefined> {
    const timeoutMs = (p.timeoutSeconds ?? 1) * 1000;
    if (p.grpc) return grpcHealth(`${this.ip}:${p.grpc.port}`, p.grpc.service ?? '', timeoutMs);
    if (p.httpGet) {
      try {
        const res = await fetch(`http://${this.ip}:${this.port(p.httpGet.port)}${p.httpGet.path}`, {
          signal: AbortSignal.timeout(timeoutMs),
        });
        await res.arrayBuffer();
        return res.status >= 200 && res.status < 400 ? undefined : `HTTP ${res.status}`;
      } catch (err) {
        return (err as Error).message;
      }
    }
    throw new Error(`${this.name}: a probe of a kind this test does not run: ${JSON.stringify(p)}`);
  }

  exited(): boolean {
    if (this.exitCode !== undefined) return true;
    const state = spawnSync('podman', ['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', this.name], { encoding: 'utf8' });
    const [running, code] = state.stdout.trim().split(' ');
    if (running === 'false') this.exitCode = Number(code);
    return running === 'false';
  }

  logs(lines = 60): string {
    // One read: podman gives the container's stdout and stderr on its own.
    const res = spawnSync('podman', ['logs', '--tail', String(lines), this.name], { encoding: 'utf8' });
    return res.stdout + res.stderr;
  }

  /** SIGTERM, then SIGKILL after the grace period, as the kubelet stops a pod: its exit code and how long it took. */
  async terminate(): Promise<{ exitCode: number; seconds: number; killed: boolean }> {
    const leave = setTimeout(() => {
      this.terminating = true;
      this.ready = false;
    }, ENDPOINTS_LAG_MS);
    const grace = this.deployment.template.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_S;
    const began = Date.now();
    const res = await podmanAsync(['stop', '--time', String(grace), this.name]);
    const seconds = (Date.now() - began) / 1000;
    clearTimeout(leave);
    this.terminating = true;
    this.ready = false;
    this.stopProbes = true;
    if (res.code !== 0) throw new Error(`${this.name}: podman stop failed: ${res.stderr.trim()}`);
    const exitCode = Number(podman(['inspect', '--format', '{{.State.ExitCode}}', this.name]));
    this.exitCode = exitCode;
    return { exitCode, seconds, killed: seconds >= grace };
  }

  remove(): void {
    this.stopProbes = true;
    spawnSync('podman', ['rm', '-f', '-t', '0', this.name], { stdio: 'ignore' });
  }
}

type HealthClient = Client & {
  check(req: { service: string }, opts: { deadline: Date }, cb: (err: Error | null, res?: { status: string }) => void): void;
};
const HealthClientCtor = makeGenericClientConstructor(healthService as unknown as ServiceDefinition, 'grpc.health.v1.Health');

/** grpc.health.v1 Check on `address` for `service`, on a connection of its own as the kubelet's: undefined when SERVING, else why not. */
function grpcHealth(address: string, service: string, timeoutMs: number): Promise<string | undefined> {
  const client = new HealthClientCtor(address, credentials.createInsecure()) as unknown as HealthClient;
  return new Promise<string | undefined>((resolve) => {
    client.check({ service }, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
      client.close();
      if (err) resolve(err.message);
      else resolve(res?.status === 'SERVING' ? undefined : `status ${res?.status}`);
    });
  });
}

/** A Deployment as rendered. */
export class Deployment {
  readonly pods: Pod[] = [];
  constructor(
    readonly manifest: Manifest,
    /** How many pods it keeps: its replicas, or its autoscaler's minimum. */
    readonly replicas: number,
  ) {}
  get name(): string {
    return this.manifest.metadata.name;
  }
  get template(): any {
    return this.manifest.spec.template;
  }
  get container(): any {
    return this.template.spec.containers[0];
  }
}

/** A Service as kube-proxy makes it: a virtual address whose ports forward each connection to a ready pod. */
class Service {
  private readonly servers: net.Server[] = [];
  private next = 0;
  /** Connections it forwarded, and those refused for want of a ready pod. */
  forwarded = 0;
  refused = 0;

  constructor(
    readonly manifest: Manifest,
    readonly address: string,
    private readonly cluster: Cluster,
  ) {}

  get name(): string {
    return this.manifest.metadata.name;
  }

  endpoints(): Pod[] {
    const selector: Record<string, string> = this.manifest.spec.selector ?? {};
    return this.cluster.allPods().filter((p) => p.ready && !p.terminating && Object.entries(selector).every(([k, v]) => p.labels[k] === v));
  }

  async listen(): Promise<void> {
    for (const port of this.manifest.spec.ports as { port: number; targetPort: number | string }[]) {
      const server = net.createServer((socket) => {
        const ready = this.endpoints();
        if (ready.length === 0) {
          this.refused++;
          socket.destroy();
          return;
        }
        const pod = ready[this.next++ % ready.length];
        this.forwarded++;
        const upstream = net.connect(pod.port(port.targetPort), pod.ip);
        pipe(socket, upstream);
      });
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port.port, this.address, resolve));
      this.servers.push(server);
    }
  }

  close(): void {
    for (const s of this.servers) s.close();
  }
}

/**
 * Both ways, as the kernel forwards a connection: a side that ends (FIN) ends the other once what it sent has been
 * written (pipe's own end), and a side that fails (a reset, a refused connect) resets the other. Destroying a side when
 * the other closes would drop what is still being written to it: the last answer of a pod that closes its connection
 * right after sending it.
 */
function pipe(a: net.Socket, b: net.Socket): void {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
}

/** Forwards connections to `address:port` (the pods' view of a machine service) to `target` on this machine. */
async function forward(address: string, port: number, target: { host: string; port: number }): Promise<net.Server> {
  const server = net.createServer((socket) => pipe(socket, net.connect(target.port, target.host)));
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, address, resolve));
  return server;
}

export class Cluster {
  readonly deployments: Deployment[];
  private readonly services: Service[] = [];
  private readonly forwarders: net.Server[] = [];
  private readonly addresses: string[] = [];
  readonly network = `platform-image-test-${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly image: string,
    private readonly manifests: Manifest[],
    private readonly secrets: Secrets,
    private readonly say: Say,
  ) {
    // A Deployment an autoscaler scales has no replicas of its own: the autoscaler keeps at least its minimum.
    const minimum = (name: string) =>
      manifests.find((m) => m.kind === 'HorizontalPodAutoscaler' && m.spec?.scaleTargetRef?.name === name)?.spec.minReplicas as
        number | undefined;
    this.deployments = manifests
      .filter((m) => m.kind === 'Deployment')
      .map((m) => new Deployment(m, m.spec.replicas ?? minimum(m.metadata.name) ?? 1));
  }

  allPods(): Pod[] {
    return this.deployments.flatMap((d) => d.pods);
  }

  service(name: string): Service {
    const s = this.services.find((x) => x.name === name);
    if (!s) throw new Error(`no Service ${name}`);
    return s;
  }

  /** The address a Service of the chart answers at (from this machine as from the pods). */
  addressOf(service: string): string {
    return this.service(service).address;
  }

  /** The network, the Services' addresses and the forwarders to the machine's Postgres and NATS. */
  async up(machine: { postgres: { host: string; port: number }; nats: { host: string; port: number } }): Promise<void> {
    podman(['network', 'create', this.network]);
    const manifests = this.manifests.filter((m) => m.kind === 'Service');
    for (const [i, m] of manifests.entries()) this.services.push(new Service(m, this.addAddress(`${ADDRESS_PREFIX}${i + 1}`), this));
    this.addAddress(MACHINE_ADDRESS);
    this.forwarders.push(await forward(MACHINE_ADDRESS, 5432, machine.postgres), await forward(MACHINE_ADDRESS, 4222, machine.nats));
    for (const s of this.services) await s.listen();
  }

  private addAddress(address: string): string {
    const res = spawnSync('ip', ['addr', 'add', `${address}/32`, 'dev', 'lo'], { encoding: 'utf8' });
    if (res.status !== 0 && !/File exists/.test(res.stderr)) throw new Error(`ip addr add ${address}: ${res.stderr.trim()}`);
    this.addresses.push(address);
    return address;
  }

  /** `podman run` arguments for a pod of `spec` named `name`: its container exactly as rendered. */
  runArgs(name: string, spec: any): string[] {
    const c = spec.containers[0];
    const args = ['--name', name, '--network', this.network];
    // Every Service name resolves to its virtual address, as cluster DNS answers (short and qualified names).
    for (const s of this.services) args.push('--add-host', `${s.name}:${s.address}`);
    const user = { ...spec.securityContext, ...c.securityContext };
    if (user.runAsUser !== undefined) args.push('--user', `${user.runAsUser}:${user.runAsGroup ?? user.runAsUser}`);
    if (spec.securityContext?.fsGroup !== undefined) args.push('--group-add', String(spec.securityContext.fsGroup));
    if (c.securityContext?.readOnlyRootFilesystem) args.push('--read-only');
    if (c.securityContext?.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
    for (const cap of c.securityContext?.capabilities?.drop ?? []) args.push('--cap-drop', cap);
    const memory = c.resources?.limits?.memory;
    if (memory) args.push('--memory', toBytes(memory));
    for (const mount of c.volumeMounts ?? []) {
      const volume = (spec.volumes ?? []).find((v: { name: string }) => v.name === mount.name);
      if (!volume?.emptyDir) throw new Error(`${name}: volume ${mount.name} is not an emptyDir; this test runs only those`);
      const size = volume.emptyDir.sizeLimit ? `,size=${toBytes(volume.emptyDir.sizeLimit)}` : '';
      args.push('--tmpfs', `${mount.mountPath}:rw,mode=1777${size}`);
    }
    for (const [k, v] of Object.entries(this.env(c))) args.push('--env', `${k}=${v}`);
    if (c.command) args.push('--entrypoint', JSON.stringify(c.command));
    args.push(this.image, ...(c.args ?? []));
    return args;
  }

  /** A container's environment as the kubelet makes it: envFrom's ConfigMaps, then env (values and Secrets' keys). */
  env(c: any): Record<string, string> {
    const env: Record<string, string> = {};
    for (const from of c.envFrom ?? []) {
      if (!from.configMapRef) throw new Error(`envFrom other than a ConfigMap: ${JSON.stringify(from)}`);
      const cm = this.manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === from.configMapRef.name);
      if (!cm && !from.configMapRef.optional) throw new Error(`ConfigMap ${from.configMapRef.name} is not rendered`);
      Object.assign(env, cm?.data ?? {});
    }
    for (const e of c.env ?? []) {
      if ('value' in e) env[e.name] = String(e.value);
      else if (e.valueFrom?.secretKeyRef) {
        const { name, key, optional } = e.valueFrom.secretKeyRef;
        const value = this.secretValue(name, key);
        if (value !== undefined) env[e.name] = value;
        else if (!optional) throw new Error(`${e.name}: Secret ${name} has no key ${key}`);
      } else if (e.valueFrom?.configMapKeyRef) {
        const { name, key } = e.valueFrom.configMapKeyRef;
        const cm = this.manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === name);
        if (cm?.data?.[key] !== undefined) env[e.name] = cm.data[key];
      } else throw new Error(`${e.name}: an env source this test does not run: ${JSON.stringify(e.valueFrom)}`);
    }
    return env;
  }

  private secretValue(name: string, key: string): string | undefined {
    const rendered = this.manifests.find((m) => m.kind === 'Secret' && m.metadata.name === name);
    if (rendered) {
      if (rendered.data?.[key] !== undefined) return Buffer.from(rendered.data[key], 'base64').toString('utf8');
      return rendered.stringData?.[key];
    }
    return this.secrets[name]?.[key];
  }

  /** Runs a Job's pod to its end (the migration Job before any Deployment): its exit code and output. */
  async runJob(job: Manifest): Promise<{ code: number | null; output: string }> {
    const name = `${job.metadata.name}-${randomBytes(2).toString('hex')}`;
    const res = await podmanAsync(['run', '--rm', ...this.runArgs(name, job.spec.template.spec)]);
    return { code: res.code, output: res.stdout + res.stderr };
  }

  /** Starts a new pod of `d` and waits until it is ready (its startup and readiness probes passed). */
  async addPod(d: Deployment): Promise<Pod> {
    const pod = new Pod(`${d.name}-${randomBytes(3).toString('hex')}`, d);
    d.pods.push(pod);
    await pod.start(this);
    await pod.probe(this.say);
    return pod;
  }

  /**
   * A rolling update of `d` with Kubernetes' defaults: a new pod at a time (maxSurge 25% rounded up: 1 for up to four
   * replicas), ready before an old one leaves its Services and gets SIGTERM (maxUnavailable 25% rounded down: 0).
   */
  async roll(d: Deployment): Promise<{ pod: string; exitCode: number; seconds: number; killed: boolean }[]> {
    const old = [...d.pods];
    const stopped: { pod: string; exitCode: number; seconds: number; killed: boolean }[] = [];
    for (const pod of old) {
      await this.addPod(d);
      const result = await pod.terminate();
      stopped.push({ pod: pod.name, ...result });
      this.departedLogs.set(pod.name, pod.logs(DEPARTED_LOG_LINES));
      pod.remove();
      d.pods.splice(d.pods.indexOf(pod), 1);
    }
    return stopped;
  }

  /** The last lines of each pod a roll stopped (it is removed then), by pod: what it logged about a failed call. */
  readonly departedLogs = new Map<string, string>();

  /** Every pod's log lines by pod, the stopped ones' included: read and split once, then searched for each failed call. */
  allLogs(): [string, string[]][] {
    const logs: [string, string][] = [
      ...this.departedLogs,
      ...this.allPods().map((p): [string, string] => [p.name, p.logs(DEPARTED_LOG_LINES)]),
    ];
    return logs.map(([pod, log]) => [pod, log.split('\n')]);
  }

  /** Every pod, the network, the Services' addresses and the forwarders gone. */
  async down(): Promise<void> {
    for (const pod of this.allPods()) pod.remove();
    for (const s of this.services) s.close();
    for (const f of this.forwarders) f.close();
    spawnSync('podman', ['network', 'rm', '-f', this.network], { stdio: 'ignore' });
    for (const a of this.addresses) spawnSync('ip', ['addr', 'del', `${a}/32`, 'dev', 'lo'], { stdio: 'ignore' });
  }
}

/** "512Mi", "256M", "1Gi" as bytes, for podman. */
function toBytes(quantity: string | number): string {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(String(quantity));
  if (!m) throw new Error(`a quantity this test does not read: ${quantity}`);
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, K: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  return String(Math.round(Number(m[1]) * unit));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
