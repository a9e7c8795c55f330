import { spawn, spawnSync } from 'node:child_process';
import { CliError, EXIT } from '../io';

/**
 * pg_dump and pg_restore from the PostgreSQL distribution, for a DATABASE_URL: one consistent snapshot of every
 * app schema in the custom format, restored with the constraints added after the data. Found by PG_DUMP_PATH /
 * PG_RESTORE_PATH, else on the PATH. The connection goes in PG* variables, never the command line (a password
 * there is visible to every local user in the process list).
 */

export interface PgTool {
  path: string;
  /** Major version of the client (pg_dump must be at least the server's). */
  major: number;
}

/** The tool, or undefined when it is not installed (the caller falls back to rows). A named path that does not work is an error. */
export function findPgTool(name: 'pg_dump' | 'pg_restore', env: NodeJS.ProcessEnv): PgTool | undefined {
  const setting = name === 'pg_dump' ? 'PG_DUMP_PATH' : 'PG_RESTORE_PATH';
  const named = env[setting];
  const candidate = named || name;
  const run = spawnSync(candidate, ['--version'], { encoding: 'utf8', env: { PATH: env.PATH ?? process.env.PATH ?? '' } });
  if (run.error || run.status !== 0) {
    if (named) throw new CliError(`${setting}=${named}: cannot run it (${run.error?.message ?? run.stderr.trim()})`, EXIT.config);
    return undefined;
  }
  const major = Number(/(\d+)(?:\.\d+)?/.exec(run.stdout)?.[1] ?? 0);
  return { path: candidate, major };
}

/** The PG* variables of a postgres URL. */
export function pgEnv(url: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const u = new URL(url);
  const out: NodeJS.ProcessEnv = { PATH: env.PATH ?? process.env.PATH ?? '' };
  out.PGHOST = decodeURIComponent(u.hostname.replace(/^\[|\]$/g, ''));
  out.PGPORT = u.port || '5432';
  if (u.username) out.PGUSER = decodeURIComponent(u.username);
  if (u.password) out.PGPASSWORD = decodeURIComponent(u.password);
  out.PGDATABASE = decodeURIComponent(u.pathname.replace(/^\//, '')) || out.PGUSER;
  const sslmode = u.searchParams.get('sslmode') ?? (u.searchParams.get('ssl') === 'true' ? 'require' : undefined);
  if (sslmode) out.PGSSLMODE = sslmode;
  for (const k of ['sslrootcert', 'sslcert', 'sslkey'] as const) {
    const v = u.searchParams.get(k);
    if (v) out[`PG${k.toUpperCase()}`] = v;
  }
  out.PGAPPNAME = 'platform-cli';
  return out;
}

/** Runs the tool; its stderr is kept for the error line (it names the problem, never the password). */
export function runPgTool(tool: PgTool, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool.path, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) return resolve();
      const line = err.trim().split('\n').filter(Boolean).slice(-3).join('; ');
      reject(new CliError(`${tool.path.split('/').pop()} failed (exit ${code}): ${line}`, EXIT.unavailable));
    });
  });
}
