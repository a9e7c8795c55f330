import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

/** `npm run simulate -- ...` as a person runs it: what npm execs after generating the proto code. */
const ROOT = path.resolve(__dirname, '../../..');
const simulate = (...args: string[]) =>
  spawnSync(process.execPath, ['deploy/simulator/simulate.mjs', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    timeout: 60_000,
  });

describe('npm run simulate', () => {
  it('--help documents every flag and exits 0', () => {
    const run = simulate('--help');
    expect(run.status).toBe(0);
    for (const flag of [
      '--url',
      '--username',
      '--password',
      '--org',
      '--hubs',
      '--spokes',
      '--months',
      '--seed',
      '--sample-hours',
      '--nats',
      '--state',
      '--serve',
    ])
      expect(run.stdout).toContain(flag);
    expect(run.stdout).toMatch(/holds\s+credentials/);
  });

  it('without --nats says why it is needed and exits 64, before calling anything', () => {
    const run = simulate('--org', 'acme', '--password', 'whatever-password', '--url', 'http://127.0.0.1:9');
    expect(run.status).toBe(64);
    expect(run.stderr).toMatch(/--nats <url> is required/);
    expect(run.stderr).toMatch(/in-process bus reaches nobody/);
    expect(run.stdout).toBe('');
  });

  it('refuses a count that is not a number with exit 64', () => {
    const run = simulate('--hubs', 'many', '--nats', 'nats://127.0.0.1:4222');
    expect(run.status).toBe(64);
    expect(run.stderr).toMatch(/--hubs must be an integer/);
  });
});
