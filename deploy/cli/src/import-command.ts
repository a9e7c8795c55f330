import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { withRetries } from '@platform/errors';
import { SingleBar } from 'cli-progress';
import { batchesOf, formatOf, membershipsOf, readImportFile, type ImportOrg } from './import-file';
import { CliError, EXIT, type CliIo } from './io';

// `import <file>`: onboarding in bulk (docs/import.md). The file is read whole, cut into batches of whole organizations
// and sent to the running platform's POST /admin/orgs/import, one batch a request, with a site admin's token. Every
// batch is idempotent, so a run cut short is run again: the resume point (<file>.import-state) skips the batches the
// platform confirmed, and sending one again would only find it there.

export interface ImportOptions {
  format?: string;
  url?: string;
  tokenStdin?: boolean;
  batchSize?: string;
  concurrency?: string;
  restart?: boolean;
}

/** What the platform answers for one organization. */
interface OrgResult {
  name: string;
  outcome: 'created' | 'completed' | 'unchanged' | 'refused';
  id: number;
  created: Record<string, number>;
  existing: Record<string, number>;
  errors: string[];
}

/** The resume point: which file (by content), sent where, cut how, and how many of its first batches the platform confirmed. */
interface ImportState {
  sha256: string;
  url: string;
  batchSize: number;
  done: number;
}

const DEFAULT_BATCH = 5000;
const DEFAULT_CONCURRENCY = 2;
/** Tries of one batch when the platform cannot be reached or answers 429/5xx: the batch is idempotent. */
const ATTEMPTS = 5;

const positive = (value: string | undefined, fallback: number, option: string) => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${option} ${value}: a positive integer`, EXIT.usage);
  return n;
};

/** The platform's base URL: --url, else PUBLIC_URL as the apps read it, else the gateway's default port on this host. */
function baseUrl(opts: ImportOptions, env: NodeJS.ProcessEnv): string {
  const url = opts.url ?? env.PLATFORM_URL ?? env.PUBLIC_URL ?? `http://localhost:${env.HTTP_PORT ?? 8080}/`;
  try {
    return new URL(url.endsWith('/') ? url : `${url}/`).toString();
  } catch {
    throw new CliError(`--url ${url}: not a URL`, EXIT.usage);
  }
}

async function tokenOf(opts: ImportOptions, io: CliIo): Promise<string> {
  const token = opts.tokenStdin ? (await io.readStdin()).split('\n')[0].trim() : io.env.PLATFORM_TOKEN;
  if (!token) throw new CliError("a site admin's access token is needed: PLATFORM_TOKEN, or --token-stdin", EXIT.usage);
  return token;
}

export async function importOrgs(file: string, opts: ImportOptions, io: CliIo): Promise<number> {
  const format = formatOf(file, opts.format);
  const batchSize = positive(opts.batchSize, DEFAULT_BATCH, '--batch-size');
  const concurrency = positive(opts.concurrency, DEFAULT_CONCURRENCY, '--concurrency');
  const url = new URL('api/v1/admin/orgs/import', baseUrl(opts, io.env)).toString();
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`, 66);
  }
  const token = await tokenOf(opts, io);
  const orgs = readImportFile(text, format);
  const batches = batchesOf(orgs, batchSize);

  const statePath = `${file}.import-state`;
  const sha256 = createHash('sha256').update(text).digest('hex');
  const saved = opts.restart ? undefined : readState(statePath);
  const resumed =
    saved && saved.sha256 === sha256 && saved.url === url && saved.batchSize === batchSize ? Math.min(saved.done, batches.length) : 0;

  const total = orgs.reduce((n, o) => n + membershipsOf(o), 0);
  const skipped = batches.slice(0, resumed).reduce((n, b) => n + b.reduce((m, o) => m + membershipsOf(o), 0), 0);
  if (resumed) io.err(`resuming: ${resumed} of ${batches.length} batches were imported by an earlier run\n`);
  const progress = progressOf(io, total, skipped);

  const totals = { created: counts(), existing: counts(), refused: [] as OrgResult[], outcomes: {} as Record<string, number> };
  const finished = new Set<number>();
  let done = resumed;
  const started = Date.now();
  let next = resumed;
  const worker = async () => {
    while (next < batches.length) {
      const i = next++;
      const results = await send(url, token, batches[i], (why) => io.err(`batch ${i + 1}: ${why}; sending it again\n`));
      for (const r of results) {
        add(totals.created, r.created);
        add(totals.existing, r.existing);
        totals.outcomes[r.outcome] = (totals.outcomes[r.outcome] ?? 0) + 1;
        if (r.errors.length) totals.refused.push(r);
      }
      finished.add(i);
      // The resume point moves over the batches confirmed without a gap, so a rerun skips only what is there.
      while (finished.has(done)) done++;
      fs.writeFileSync(statePath, JSON.stringify({ sha256, url, batchSize, done } satisfies ImportState));
      progress.update(batches[i].reduce((n, o) => n + membershipsOf(o), 0));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length || 1) }, worker));
  } finally {
    progress.stop();
  }
  fs.rmSync(statePath, { force: true });

  const seconds = (Date.now() - started) / 1000;
  const sent = total - skipped;
  io.out(
    `${orgs.length} organizations in ${batches.length} batches: ` +
      ['created', 'completed', 'unchanged', 'refused'].map((o) => `${totals.outcomes[o] ?? 0} ${o}`).join(', ') +
      '\n' +
      `written:       ${describeCounts(totals.created)}\n` +
      `already there: ${describeCounts(totals.existing)}\n` +
      `${sent} memberships in ${seconds.toFixed(1)} s (${Math.round(sent / Math.max(seconds, 0.001))}/s)\n`,
  );
  for (const r of totals.refused) io.err(`${r.name}: ${r.outcome === 'refused' ? 'refused' : 'imported but'}: ${r.errors.join('; ')}\n`);
  if (totals.refused.length) {
    io.err(
      `${totals.refused.length} organizations need attention: fix them in the file and run it again (the others will be found there)\n`,
    );
    return EXIT.failed;
  }
  return EXIT.ok;
}

function readState(statePath: string): ImportState | undefined {
  try {
    return JSON.parse(fs.readFileSync(statePath, 'utf8')) as ImportState;
  } catch {
    return undefined;
  }
}

/** A failure worth another try; `final` is what the command says when no try is left. */
class Retryable extends Error {
  constructor(
    readonly why: string,
    readonly final: CliError,
  ) {
    super(why);
  }
}

/** Sends one batch, again when the platform is unreachable, busy or failing (the batch is idempotent). */
async function send(url: string, token: string, batch: ImportOrg[], retrying: (why: string) => void): Promise<OrgResult[]> {
  const body = JSON.stringify({ organizations: batch });
  const once = async (): Promise<OrgResult[]> => {
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method: 'POST', headers: { authorization: `token ${token}`, 'content-type': 'application/json' }, body });
      text = await res.text();
    } catch (err) {
      const why = `${(err as Error).message}${(err as { cause?: Error }).cause ? ` (${(err as { cause: Error }).cause.message})` : ''}`;
      throw new Retryable(why, new CliError(`cannot reach ${url}: ${why}`, EXIT.unavailable));
    }
    const answer: unknown = text ? JSON.parse(text) : undefined;
    if (res.status === 200) return (answer as { results: OrgResult[] }).results;
    const message = (answer as { message?: string } | undefined)?.message ?? `HTTP ${res.status}`;
    if (res.status === 401 || res.status === 403) throw new CliError(`the platform refused the token (${res.status}): ${message}`);
    const refused = new CliError(
      `the platform refused a batch (${res.status}): ${message}`,
      res.status >= 500 ? EXIT.unavailable : EXIT.failed,
    );
    if (res.status === 429 || res.status >= 500) throw new Retryable(`${res.status} ${message}`, refused);
    throw refused;
  };
  return withRetries(
    { attempts: ATTEMPTS, baseDelayMs: 500, jitter: 'none' },
    (err, failed) => err instanceof Retryable && failed < ATTEMPTS && (retrying(err.why), true),
    once,
  ).catch((err: unknown) => {
    throw err instanceof Retryable ? err.final : err;
  });
}

const counts = () => ({ orgs: 0, teams: 0, memberships: 0, roles: 0, role_assignments: 0 });
const add = (into: Record<string, number>, c: Record<string, number>) => {
  for (const k of Object.keys(into)) into[k] += c[k] ?? 0;
};
const describeCounts = (c: Record<string, number>) =>
  `${c.orgs} organizations, ${c.teams} teams, ${c.memberships} memberships, ${c.roles} custom roles, ${c.role_assignments} role assignments`;

/** A progress bar on a terminal; elsewhere (a log, a test) one line per tenth done. */
function progressOf(io: CliIo, total: number, start: number): { update(n: number): void; stop(): void } {
  let value = start;
  if (process.stderr.isTTY) {
    const bar = new SingleBar({
      format: 'importing [{bar}] {percentage}% | {value}/{total} memberships | {speed}/s | ETA {eta_formatted}',
      hideCursor: true,
      etaBuffer: 20,
    });
    const began = Date.now();
    bar.start(total, start, { speed: 0 });
    return {
      update(n) {
        value += n;
        bar.update(value, { speed: Math.round((value - start) / Math.max((Date.now() - began) / 1000, 0.001)) });
      },
      stop: () => bar.stop(),
    };
  }
  let shown = Math.floor((start / Math.max(total, 1)) * 10);
  return {
    update(n) {
      value += n;
      const tenth = Math.floor((value / Math.max(total, 1)) * 10);
      if (tenth > shown) {
        shown = tenth;
        io.err(`imported ${value} of ${total} memberships\n`);
      }
    },
    stop: () => {},
  };
}
