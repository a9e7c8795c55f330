// Jest's global setup and teardown (the root jest config): with more than one worker, every worker gets a NATS server
// of its own (JetStream on, its own storage), so test files running at the same time never hear each other's messages
// nor share a stream's durable consumers, whatever subjects and stream names the platform uses. Databases need nothing
// here: every test file makes its own (createTestDatabase). testNatsUrl() (libs/testing) hands a worker's test files
// its server, named in TEST_NATS_URL_WORKER_<JEST_WORKER_ID>. With one worker the suite runs on the shared server
// (TEST_NATS_URL or the local one), as before.
//
// Plain JavaScript: the global setup runs before jest transforms anything.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

function natsServerBinary() {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/local/bin', '/usr/bin', '/usr/sbin', '/usr/local/sbin'];
  const candidates = process.env.NATS_SERVER_BIN ? [process.env.NATS_SERVER_BIN] : dirs.filter(Boolean).map((d) => path.join(d, 'nats-server'));
  for (const file of candidates) {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  throw new Error(
    'test files in parallel workers need nats-server for a server per worker: install it (apt-get install nats-server), ' +
      'set NATS_SERVER_BIN, or run one file at a time (jest -i)',
  );
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const accepts = (port) =>
  new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** One `nats-server -js` on a free loopback port; resolves once it accepts connections. */
async function startServer(bin) {
  const port = await freePort();
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-nats-'));
  const proc = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  proc.stderr.on('data', (d) => (output += d));
  for (const until = Date.now() + 10_000; Date.now() < until; ) {
    if (proc.exitCode !== null) throw new Error(`nats-server exited with ${proc.exitCode}:\n${output}`);
    if (await accepts(port)) return { proc, storeDir, url: `nats://127.0.0.1:${port}` };
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error(`nats-server did not listen on ${port} within 10 s:\n${output}`);
}

// On globalThis: setup and teardown run in jest's main process, but each through its own module loading.
const servers = (globalThis.__workerNatsServers ??= []);

async function setup(globalConfig) {
  // The unit tier talks to no NATS server (jest.tiers.js).
  if (globalConfig.maxWorkers <= 1 || process.env.TEST_TIER === 'unit') return;
  const bin = natsServerBinary();
  // Worker ids run from 1 to maxWorkers.
  for (let id = 1; id <= globalConfig.maxWorkers; id++) {
    const server = await startServer(bin);
    servers.push(server);
    process.env[`TEST_NATS_URL_WORKER_${id}`] = server.url;
  }
  process.once('exit', () => servers.forEach((s) => s.proc.kill('SIGKILL')));
}

async function teardown() {
  for (const s of servers.splice(0)) {
    await new Promise((resolve) => {
      if (s.proc.exitCode !== null || s.proc.signalCode !== null) return resolve();
      s.proc.once('exit', resolve);
      s.proc.kill('SIGKILL');
    });
    fs.rmSync(s.storeDir, { recursive: true, force: true });
  }
}

module.exports = { setup, teardown };
