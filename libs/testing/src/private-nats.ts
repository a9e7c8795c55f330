import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { MissingServiceError } from './services';

/** A NATS server (JetStream on) that belongs to one test, so the test may stop and start it. */
export interface PrivateNats {
  url: string;
  port: number;
  /** Kills the server (SIGKILL, as a crash would); its clients see the connection drop. */
  kill(): Promise<void>;
  /** Starts it again on the same port and storage directory. */
  start(): Promise<void>;
  /** Stops it (SIGSTOP) without closing anything: its clients and routes stay connected to a server that says nothing. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
  /** Kills it and removes its storage directory. */
  dispose(): Promise<void>;
}

/** The nats-server binary: NATS_SERVER_BIN, else on PATH, else the usual system places. */
function natsServerBinary(): string {
  const fromEnv = process.env.NATS_SERVER_BIN;
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/local/bin', '/usr/bin', '/usr/sbin', '/usr/local/sbin'];
  const candidates = fromEnv ? [fromEnv] : dirs.filter(Boolean).map((d) => path.join(d, 'nats-server'));
  for (const file of candidates) {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  throw new MissingServiceError(
    `nats-server is needed for this test (a server of its own that it can stop): install it (e.g. apt-get install nats-server) ` +
      `or set NATS_SERVER_BIN${fromEnv ? ` (${fromEnv} is not executable)` : ''}`,
  );
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** One nats-server process on a loopback port: started, killed (SIGKILL) and started again with the same arguments. */
function natsProcess(bin: string, port: number, args: string[]) {
  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill('SIGKILL');
  process.once('exit', killOnExit);
  const start = async () => {
    let output = '';
    const proc = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    proc.stdout!.on('data', (d) => (output += d));
    proc.stderr!.on('data', (d) => (output += d));
    let exited: number | null | undefined;
    proc.once('exit', (code) => (exited = code));
    for (const until = Date.now() + 10_000; Date.now() < until;) {
      if (exited !== undefined) throw new Error(`nats-server exited with ${exited}:\n${output}`);
      if (await accepts(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    proc.kill('SIGKILL');
    throw new Error(`nats-server did not listen on ${port} within 10 s:\n${output}`);
  };
  const kill = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  };
  const forget = () => process.removeListener('exit', killOnExit);
  const pause = () => void child?.kill('SIGSTOP');
  const resume = () => void child?.kill('SIGCONT');
  return { start, kill, forget, pause, resume };
}

/**
 * Starts `nats-server -js` on a free loopback port with its own storage directory; `jetstream: false` without JetStream,
 * `user` with that one user and password required, `token` with that token.
 */
export async function startPrivateNats(
  opts: { jetstream?: boolean; user?: { name: string; password: string }; token?: string } = {},
): Promise<PrivateNats> {
  const bin = natsServerBinary();
  const port = await freePort();
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'private-nats-'));
  const args = [
    ...(opts.jetstream === false ? [] : ['-js', '-sd', storeDir]),
    ...(opts.user ? ['--user', opts.user.name, '--pass', opts.user.password] : []),
    ...(opts.token ? ['--auth', opts.token] : []),
  ];
  const server = natsProcess(bin, port, args);
  await server.start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    kill: server.kill,
    start: server.start,
    pause: server.pause,
    resume: server.resume,
    async dispose() {
      await server.kill();
      server.forget();
      fs.rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/** Clustered NATS servers with JetStream that belong to one test: any node may be killed and started again. */
export interface PrivateNatsCluster {
  /** Every node, in order; each node's `url` names that node alone. */
  nodes: PrivateNats[];
  /** Every node's address, comma-separated, as a client of the cluster is configured. */
  url: string;
  /** The index of the node that leads a JetStream stream now, asked of the first node that answers. */
  streamLeader(stream: string): Promise<number | undefined>;
  /** Asks a stream's leader to step down (another replica is elected), through the first node that answers. */
  stepDown(stream: string): Promise<void>;
  /** Kills every node and removes their storage directories. */
  dispose(): Promise<void>;
}

/**
 * Starts `size` nats-server processes (three by default) clustered over loopback routes, each with JetStream and
 * a storage directory of its own, and resolves once JetStream has a meta leader (streams can be created).
 */
export async function startPrivateNatsCluster(size = 3): Promise<PrivateNatsCluster> {
  const bin = natsServerBinary();
  const ports: { client: number; route: number }[] = [];
  for (let i = 0; i < size; i++) ports.push({ client: await freePort(), route: await freePort() });
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`).join(',');
  const dirs: string[] = [];
  const nodes: PrivateNats[] = [];
  const servers: ReturnType<typeof natsProcess>[] = [];
  for (const [i, p] of ports.entries()) {
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), `private-nats-${i}-`));
    dirs.push(storeDir);
    const server = natsProcess(bin, p.client, [
      '-js',
      '-sd',
      storeDir,
      '-n',
      `node-${i}`,
      '--cluster_name',
      'private',
      '--cluster',
      `nats://127.0.0.1:${p.route}`,
      '--routes',
      routes,
    ]);
    servers.push(server);
    nodes.push({
      url: `nats://127.0.0.1:${p.client}`,
      port: p.client,
      kill: server.kill,
      start: server.start,
      pause: server.pause,
      resume: server.resume,
      async dispose() {
        await server.kill();
        server.forget();
        fs.rmSync(storeDir, { recursive: true, force: true });
      },
    });
  }
  const dispose = async () => {
    for (const node of nodes) await node.dispose();
  };
  try {
    await Promise.all(servers.map((s) => s.start()));
    await jetStreamReady(ports[0].client);
  } catch (err) {
    await dispose();
    throw err;
  }
  const streamLeader = async (stream: string) => {
    for (const p of ports) {
      const answer = await jsRequest(p.client, `$JS.API.STREAM.INFO.${stream}`).catch(() => undefined);
      const leader = answer ? (JSON.parse(answer) as { cluster?: { leader?: string } }).cluster?.leader : undefined;
      if (leader) return Number(leader.replace('node-', ''));
    }
    return undefined;
  };
  const stepDown = async (stream: string) => {
    for (const p of ports)
      if (
        await jsRequest(p.client, `$JS.API.STREAM.LEADER.STEPDOWN.${stream}`).then(
          () => true,
          () => false,
        )
      )
        return;
  };
  return { nodes, url: nodes.map((n) => n.url).join(','), streamLeader, stepDown, dispose };
}

/** Waits until the cluster's JetStream answers an account-info request (it has elected its meta leader). */
async function jetStreamReady(port: number): Promise<void> {
  const until = Date.now() + 20_000;
  for (;;) {
    const answer = await jsRequest(port, '$JS.API.INFO').catch(() => undefined);
    if (answer && !/"error"/.test(answer)) return;
    if (Date.now() > until) throw new Error(`JetStream of the NATS cluster did not become ready within 20 s (last answer: ${answer})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One request over the NATS text protocol (no client library here: libs/testing does not depend on one). */
function jsRequest(port: number, subject: string): Promise<string> {
  const inbox = `_INBOX.private_nats_${Math.random().toString(36).slice(2)}`;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let buffer = '';
    const timer = setTimeout(() => (socket.destroy(), reject(new Error('no answer'))), 2_000);
    socket.on('error', (err) => (clearTimeout(timer), reject(err)));
    socket.on('data', (d) => {
      buffer += d;
      const msg = new RegExp(`MSG ${inbox.replace(/\./g, '\\.')} 1 (\\d+)\r\n`).exec(buffer);
      if (msg && buffer.length >= msg.index + msg[0].length + Number(msg[1])) {
        clearTimeout(timer);
        socket.destroy();
        resolve(buffer.slice(msg.index + msg[0].length, msg.index + msg[0].length + Number(msg[1])));
      }
    });
    socket.write(`CONNECT {"verbose":false,"pedantic":false}\r\nSUB ${inbox} 1\r\nPUB ${subject} ${inbox} 0\r\n\r\n`);
  });
}
