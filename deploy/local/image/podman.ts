// Podman as the image test drives it: its settings from deploy/local/image/containers.conf (nothing of the machine's is
// changed), its commands run synchronously where they are quick and asynchronously where they wait.
import { execFileSync, spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import * as path from 'node:path';

export const PODMAN_ENV: NodeJS.ProcessEnv = { ...process.env, CONTAINERS_CONF: path.join(__dirname, 'containers.conf') };

/** Runs a command with its output shown (the long steps show their own progress); throws when it fails. */
export function run(cmd: string, args: string[], opts: SpawnSyncOptions = {}): void {
  const res = spawnSync(cmd, args, { stdio: 'inherit', env: PODMAN_ENV, ...opts });
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${res.status ?? res.signal})`);
}

/** A command's output, trimmed; throws with its error output when it fails. */
export function output(cmd: string, args: string[], opts: { cwd?: string; timeout?: number } = {}): string {
  try {
    return execFileSync(cmd, args, {
      encoding: 'utf8',
      env: PODMAN_ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
      ...opts,
    }).trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.slice(0, 3).join(' ')} ...: ${(e.stderr || e.message).trim().slice(-2000)}`);
  }
}

/** `podman <args>`: its output. */
export function podman(args: string[], opts: { cwd?: string; timeout?: number } = {}): string {
  return output('podman', args, opts);
}

/** `podman <args>` without waiting on this thread: its exit code and output. */
export function podmanAsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('podman', args, { env: PODMAN_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function imageExists(tag: string): boolean {
  return spawnSync('podman', ['image', 'exists', tag], { env: PODMAN_ENV }).status === 0;
}

/** Bytes of an image, as podman reports it (every layer, uncompressed). */
export function imageSize(tag: string): number {
  return Number(podman(['image', 'inspect', '--format', '{{.Size}}', tag]));
}
