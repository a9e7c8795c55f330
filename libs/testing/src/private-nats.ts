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

/** Starts `nats-server -js` on a free loopback port with its own storage directory. */
export async function startPrivateNats(): Promise<PrivateNats> {
  const bin = natsServerBinary();
  const port = await freePort();
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'private-nats-'));
  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill('SIGKILL');
  process.once('exit', killOnExit);

  const start = async () => {
    let output = '';
    const proc = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'pipe', 'pipe'] });
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

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    kill,
    start,
    async dispose() {
      await kill();
      process.removeListener('exit', killOnExit);
      fs.rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
