/**
 * `npm run bench -- grpc-check`: authz `Check` over gRPC as other teams call it, side by side in one run:
 * - a bare grpc-js handler answering `{allowed: true}` (its own process): what the transport costs;
 * - the platform's authz called by a platform app (its signed credential);
 * - the same call by a service account (its token, checked by orgs-teams once and then kept; the account's
 *   question about the object asked of authz's engine).
 * The platform is `npm start`'s one process (embedded database) in a process of its own; calls go over loopback
 * TCP with the service kit's client, in-flight calls kept at CONCURRENCY. Each mode is measured ROUNDS times,
 * interleaved, and its best round is kept (the machine's other work only ever lowers a round). The target: the
 * service account at ≥ 80% of the platform app. Prints progress to stderr, JSON to stdout, and writes the table
 * into docs/benchmarks.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { authzV1 } from '@platform/proto';
import { createClient, useAppKeys, type CallOptions } from '@platform/service-kit';
import { runLine, writeDocBlock } from './doc-block';
import { ROOT, freePort, waitFor } from './support';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 32;
const TARGET_SHARE = 0.8;
const PASSWORD = 'bench-admin-password';
const progress = (msg: string) => process.stderr.write(`[bench grpc-check] ${msg}\n`);

type Client = ReturnType<typeof createClient<typeof authzV1.AuthzServiceService>>;

/** Calls per second of `call` with CONCURRENCY in flight for DURATION_S; any failure stops the bench. */
async function measure(call: () => Promise<unknown>): Promise<number> {
  const until = Date.now() + DURATION_S * 1_000;
  let done = 0;
  const worker = async () => {
    while (Date.now() < until) {
      await call();
      done++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return Math.round(done / ((Date.now() - started) / 1_000));
}

/** The first answer of a server that may still be starting: UNAVAILABLE is tried again for up to 30 s. */
async function firstAnswer(call: () => Promise<unknown>): Promise<unknown> {
  for (let tries = 0; ; tries++) {
    try {
      return await call();
    } catch (err) {
      if ((err as { kind?: string }).kind !== 'unavailable' || tries >= 300) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A process's JSON log line naming `app started`, with its gRPC port. */
function grpcPortOf(child: ChildProcess, app: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const m = /"grpcPort":(\d+)/.exec(line);
        if (m && line.includes(`"msg":"${app} started"`)) resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`the process exited with ${code}`)));
  });
}

async function main() {
  // The platform and this process share the apps' key, so this process calls as a platform app.
  const key = randomBytes(32).toString('base64');
  useAppKeys([key], 'bench');
  const barePort = await freePort();
  const bare = spawn(process.execPath, ['--import', 'tsx', path.join('bench', 'grpc-bare-check.ts'), String(barePort)], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: path.join(ROOT, 'tsconfig.base.json') },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-grpc-'));
  const platform = spawn(process.execPath, ['--import', 'tsx', 'deploy/local/src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TSX_TSCONFIG_PATH: path.join(ROOT, 'tsconfig.base.json'),
      HTTP_PORT: String(port),
      DATA_DIR: dataDir,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_PASSWORD: PASSWORD,
      PLATFORM_APP_KEYS: key,
      LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const authzPort = grpcPortOf(platform, 'authz');
  const base = `http://127.0.0.1:${port}/api/v1`;
  const clients: Client[] = [];
  try {
    progress('starting the platform (npm start, embedded database)');
    await waitFor(`${base}/version`, platform);
    const json = async (method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<any> => {
      const res = await fetch(`${base}${url}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return res.status === 204 ? undefined : res.json();
    };
    const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
    const admin = { authorization: `token ${(await json('POST', '/users/root/tokens', { authorization: basic }, { name: 'bench' })).sha1}` };
    const org = await json('POST', '/orgs', admin, { username: 'bench' });
    const account = await json('POST', '/orgs/bench/service-accounts', admin, { name: 'bench-checker' });
    const minted = await json('POST', `/orgs/bench/service-accounts/${account.id}/tokens`, admin, { name: 'bench' });
    const request: authzV1.CheckRequest = {
      tuple: { user: `user:${account.id}`, relation: 'member', object: `organization:${org.id}` },
      contextualTuples: [],
    };
    // A check about someone else (the owner), so the account's own question (may it see the organization?) is asked too.
    const other: authzV1.CheckRequest = { tuple: { user: 'user:1', relation: 'member', object: `organization:${org.id}` }, contextualTuples: [] };

    const client = (address: string) => {
      const c = createClient(authzV1.AuthzServiceService, address, { name: 'authz', inProcess: false });
      clients.push(c);
      return c;
    };
    const authz = client(`127.0.0.1:${await authzPort}`);
    const bareClient = client(`127.0.0.1:${barePort}`);
    const asAccount: CallOptions = { metadata: { authorization: `Bearer ${minted.sha1}` } };
    const modes: Record<string, () => Promise<unknown>> = {
      bare: () => bareClient.check(request),
      app: () => authz.check(other),
      account: () => authz.check(other, asAccount),
    };
    for (const [mode, call] of Object.entries(modes)) {
      const answer = (await firstAnswer(call)) as authzV1.CheckResponse;
      if (mode !== 'bare' && answer.allowed !== true) throw new Error(`${mode}: the owner of bench is a member of it`);
    }
    progress(`warm-up, then ${ROUNDS} rounds of ${DURATION_S} s per mode, ${CONCURRENCY} calls in flight`);
    for (const call of Object.values(modes)) await measure(call);
    const rounds: Record<string, number[]> = { bare: [], app: [], account: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [mode, call] of Object.entries(modes)) rounds[mode].push(await measure(call));
      progress(`round ${r + 1}: ${Object.entries(rounds).map(([m, v]) => `${m} ${v[r]}/s`).join(', ')}`);
    }
    const best = Object.fromEntries(Object.entries(rounds).map(([m, v]) => [m, Math.max(...v)])) as Record<'bare' | 'app' | 'account', number>;

    // The kept credential goes with its token: revoked, the very next call is refused.
    const tokens = await json('GET', `/orgs/bench/service-accounts/${account.id}/tokens`, admin);
    await json('DELETE', `/orgs/bench/service-accounts/${account.id}/tokens/${tokens[0].id}`, admin);
    const afterRevoke = await authz.check(other, asAccount).then(
      () => 'answered',
      (err: { kind?: string }) => err.kind,
    );

    const share = best.account / best.app;
    const result = { rounds, best, share, target: TARGET_SHARE, met: share >= TARGET_SHARE, afterRevoke };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    writeDocBlock(
      'grpc-check',
      [
        runLine(`${ROUNDS} interleaved rounds of ${DURATION_S} s per mode, the best kept; ${CONCURRENCY} calls in flight; client, platform and bare server share the cores.`),
        '',
        '| authz `Check` over gRPC (loopback TCP, service kit client) | calls/s | % of bare | % of the platform app |',
        '|---|---|---|---|',
        `| bare grpc-js handler answering \`{allowed: true}\` | ${best.bare} | 100% | — |`,
        `| the platform's authz, called by a platform app | ${best.app} | ${((100 * best.app) / best.bare).toFixed(0)}% | 100% |`,
        `| the same call by a service account (token kept, its question asked of the engine) | ${best.account} | ${((100 * best.account) / best.bare).toFixed(0)}% | ${(100 * share).toFixed(0)}% |`,
        '',
        `Target: the service account at ≥ ${100 * TARGET_SHARE}% of the platform app — ${result.met ? 'met' : 'NOT met'}. ` +
          `After its token was revoked, the next call: ${afterRevoke === 'unauthenticated' ? 'refused (UNAUTHENTICATED)' : afterRevoke}.`,
      ].join('\n'),
    );
    if (afterRevoke !== 'unauthenticated') throw new Error(`a revoked token was ${afterRevoke}`);
  } finally {
    for (const c of clients) c.close();
    bare.kill('SIGKILL');
    platform.kill('SIGINT');
    await new Promise((r) => (platform.exitCode === null ? platform.once('exit', r) : r(undefined)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
