import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { appBundles, freePort } from '@platform/testing';
import { killLaunched, npmStart, ROOT } from './launcher';

/**
 * What stops a start is one line on stderr naming the setting and what to do, with the
 * documented exit code (78 configuration and ports, 69 a dependency), never a stack; each case runs the app
 * as its own process, as its image does, and the one-process launcher says which app failed.
 */

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-start-errors-'));
/** The apps run on their own below, and their bundles (made fresh first). */
const ON_THEIR_OWN = ['gateway', 'marketplace-listener', 'authz', 'orgs-teams'] as const;
let bundles: Record<(typeof ON_THEIR_OWN)[number], string>;
beforeAll(() => {
  bundles = appBundles(ON_THEIR_OWN);
}, 120_000);
afterAll(() => {
  killLaunched();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Runs an app's bundle (dist/apps/<app>/main.js, as its image does) as its own process and waits for it to exit. */
function runApp(
  app: (typeof ON_THEIR_OWN)[number],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bundles[app]], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      GRPC_PORT: '0',
      HTTP_PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** A port held by this test for as long as the callback runs. */
async function withPortTaken<T>(fn: (port: number) => Promise<T>): Promise<T> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  try {
    return await fn((server.address() as net.AddressInfo).port);
  } finally {
    server.close();
  }
}

const NO_STACK = expect.not.stringMatching(/\n\s+at /);

describe('an app run on its own', () => {
  it.each([
    ['HTTP_PORT', 'gateway'],
    ['GRPC_PORT', 'gateway'],
    ['METRICS_PORT', 'gateway'],
    ['MARKETPLACE_HTTP_PORT', 'marketplace-listener'],
  ] as const)(
    'stops with exit code 78 and one line naming %s when its port is in use (%s)',
    async (setting, app) => {
      await withPortTaken(async (port) => {
        const run = await runApp(app, { [setting]: String(port) });
        expect(run).toEqual({
          code: 78,
          stdout: NO_STACK,
          stderr: `${app}: ${setting}: port ${port} is already in use; stop the process listening there or set ${setting} to a free port\n`,
        });
      });
    },
    40_000,
  );

  it('stops with exit code 78 and one line when OPENFGA_API_URL is set without OPENFGA_STORE_ID', async () => {
    const run = await runApp('authz', { OPENFGA_API_URL: 'http://127.0.0.1:8080' });
    expect(run).toEqual({
      code: 78,
      stdout: '',
      stderr:
        'authz: invalid configuration: OPENFGA_STORE_ID: required when OPENFGA_API_URL is set; set it to the id of the store ' +
        'holding the platform’s model, or unset OPENFGA_API_URL to use the embedded engine\n',
    });
  }, 40_000);

  it('stops with exit code 78 and one line naming a setting whose value is wrong', async () => {
    const run = await runApp('gateway', { HTTP_PORT: 'http' });
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/^gateway: invalid configuration: HTTP_PORT: .+ \(got "http"\)\n$/);
  }, 40_000);

  it('stops with exit code 69 and one line naming DATABASE_URL (host and port only) when the database cannot be reached', async () => {
    const closed = await freePort();
    const run = await runApp('orgs-teams', { DATABASE_URL: `postgres://platform:s3cret-pass@127.0.0.1:${closed}/platform` });
    expect(run).toEqual({
      code: 69,
      stdout: NO_STACK,
      stderr:
        `orgs-teams: cannot use the database at 127.0.0.1:${closed}/platform (DATABASE_URL): connection refused; ` +
        'start Postgres there or point DATABASE_URL at a running server\n',
    });
  }, 40_000);
});

describe('the one-process launcher', () => {
  const launchFails = (env: Record<string, string>) =>
    npmStart({ DATA_DIR: dataDir, ...env }).then(
      () => {
        throw new Error('the launcher started');
      },
      (err: Error) => {
        const [status, ...output] = err.message.split('\n');
        return { code: Number(/exited with (\d+)/.exec(status)?.[1]), output: output.join('\n') };
      },
    );

  it('names the app that could not reach the database, stops, and exits 69 without a stack', async () => {
    const closed = await freePort();
    const { code, output } = await launchFails({ DATABASE_URL: `postgres://platform:s3cret-pass@127.0.0.1:${closed}/platform` });
    expect(code).toBe(69);
    expect(output).toContain(
      `platform: authz failed to start: cannot use the database at 127.0.0.1:${closed}/platform (DATABASE_URL): connection refused; ` +
        'start Postgres there or point DATABASE_URL at a running server\n',
    );
    expect(output).not.toContain('s3cret');
    expect(output).not.toMatch(/\n\s+at /);
  }, 60_000);

  it("checks every app's settings before any app starts: a bad one of the last app leaves DATA_DIR untouched", async () => {
    const fresh = path.join(dataDir, 'never-written');
    const { code, output } = await launchFails({ DATA_DIR: fresh, MARKETPLACE_API_SECRET: 'too-short' });
    expect(code).toBe(78);
    expect(output).toContain(
      'platform: marketplace-listener failed to start: invalid configuration: MARKETPLACE_API_SECRET: must be at least 16 characters (got a value that is not shown)\n',
    );
    expect(output).not.toContain('too-short');
    expect(output).not.toContain('[platform] starting');
    expect(output).not.toMatch(/generated password|\n\s+at /);
    expect(fs.existsSync(fresh)).toBe(false);
  }, 60_000);

  it('finds HTTP_PORT in use before anything starts: one line, exit 78, nothing migrated, no password made', async () => {
    await withPortTaken(async (port) => {
      const { code, output } = await launchFails({ HTTP_PORT: String(port) });
      expect(code).toBe(78);
      expect(output).toContain(
        `platform: HTTP_PORT: port ${port} is already in use; stop the process listening there or set HTTP_PORT to a free port\n`,
      );
      expect(output).not.toContain('[platform] starting');
      expect(output).not.toMatch(/generated password|"applied"/);
      expect(output).not.toMatch(/\n\s+at /);
    });
  }, 60_000);

  it('says so when Ctrl-C comes during start-up, and exits 130', async () => {
    const child = spawn(process.execPath, ['deploy/local/start.mjs'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HTTP_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    });
    let output = '';
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Once it is starting its apps.
    await new Promise<void>((resolve) => child.stderr.on('data', () => output.includes('[platform] starting') && resolve()));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(output).toContain('[platform] SIGINT during start-up: exiting\n');
  }, 60_000);
});
