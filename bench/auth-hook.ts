/**
 * `npm run bench -- auth-hook`: decisions per second and p99 of the metrics-proxy auth hook
 * (`GET /api/v1/metricsproxy/auth/{uidcid}/{path}`, docs/metrics-proxy.md) with its cache warm, beside a bare
 * Express 5 handler answering the same JSON and headers, measured in one run on `npm start`'s one process (embedded
 * database). The target is 5,000 decisions/s on the 2-core machine. Prints progress to stderr, the JSON result
 * to stdout, and writes the table into docs/benchmarks.md.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import autocannon from 'autocannon';
import { runLine, writeDocBlock } from './doc-block';
import { ROOT, freePort, runTs, waitFor } from './support';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 32;
const TARGET_RPS = 5_000;
const PASSWORD = 'bench-admin-password';
const progress = (msg: string) => process.stderr.write(`[bench auth-hook] ${msg}\n`);

async function measure(opts: autocannon.Options) {
  const result = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...opts });
  // Which statuses the errors were (a refused or failing decision is not a decision made).
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
  return { rps: Math.round(result.requests.average), p99: result.latency.p99, errors: result.errors + result.non2xx, statuses };
}

async function main() {
  // The bare baseline: the hook's answer (body and headers) from a plain Express handler, in its own process.
  const barePort = await freePort();
  const bare = spawn(
    process.execPath,
    [
      '-e',
      `const e = require('express')();
       e.get('*splat', (_q, r) => r.set({ 'X-Scope-OrgID': '1.c', 'X-Metrics-Owner': 'bench', 'X-Metrics-Cluster': 'prod', 'Cache-Control': 'no-store' })
         .json({ owner: 'bench', clusterName: 'prod', tenantID: '1.c' }));
       e.listen(${barePort}, '127.0.0.1');`,
    ],
    { cwd: ROOT, stdio: 'inherit' },
  );
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-hook-'));
  const platform = runTs('deploy/local/src/main.ts', {
    HTTP_PORT: String(port),
    DATA_DIR: dataDir,
    PLATFORM_ADMIN_USERNAME: 'root',
    PLATFORM_ADMIN_PASSWORD: PASSWORD,
    LOG_LEVEL: 'warn',
  });
  const base = `http://127.0.0.1:${port}/api/v1`;
  try {
    await waitFor(`http://127.0.0.1:${barePort}/x`, bare);
    progress('starting the platform (npm start, embedded database)');
    await waitFor(`${base}/version`, platform);
    const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
    const json = async (method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<any> => {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const token = (await json('POST', '/users/root/tokens', { authorization: basic }, { name: 'bench' })).sha1 as string;
    const auth = { authorization: `token ${token}` };
    const org = await json('POST', '/orgs', auth, { username: 'bench' });
    const hub = (await json('POST', '/orgs/bench/clusters', auth, { name: 'prod' })).cluster.uid as string;
    const hookUrl = `${base}/metricsproxy/auth/${org.id}.${hub}/api/v1/query_range`;
    const first = await fetch(hookUrl, { headers: auth });
    if (first.status !== 200 || first.headers.get('x-scope-orgid') !== `${org.id}.${hub}`)
      throw new Error(`the hook answered ${first.status}`);

    progress(`${DURATION_S} s each, ${CONNECTIONS} connections: bare, the hook (cache warm), /version`);
    await measure({ url: hookUrl, headers: auth, duration: 1 }); // warm-up: JIT, caches
    const bareResult = await measure({ url: `http://127.0.0.1:${barePort}/api/v1/metricsproxy/auth/x/y` });
    const hook = await measure({ url: hookUrl, headers: auth });
    // The gateway's cheapest route (no token, one backend call): what the edge itself costs, for comparison.
    const version = await measure({ url: `${base}/version` });
    const result = {
      bare: bareResult,
      hook,
      version,
      share: hook.rps / bareResult.rps,
      target: TARGET_RPS,
      met: hook.rps >= TARGET_RPS && hook.errors === 0,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    writeDocBlock(
      'auth-hook',
      [
        runLine(`${DURATION_S} s per measurement, ${CONNECTIONS} connections, load generator on the same cores.`),
        '',
        '| handler | decisions/s | p99 | errors | % of bare |',
        '|---|---|---|---|---|',
        `| bare Express 5 (same JSON and headers) | ${bareResult.rps} | ${bareResult.p99} ms | ${bareResult.errors} | 100% |`,
        `| auth hook, cache warm (token, org member) | ${hook.rps} | ${hook.p99} ms | ${hook.errors} | ${(100 * result.share).toFixed(0)}% |`,
        `| for comparison: GET /api/v1/version (no token, one backend call) | ${version.rps} | ${version.p99} ms | ${version.errors} | ${((100 * version.rps) / bareResult.rps).toFixed(0)}% |`,
        '',
        `Target: ≥ ${TARGET_RPS.toLocaleString('en')} decisions/s — ${result.met ? 'met' : 'NOT met'}.`,
      ].join('\n'),
    );
  } finally {
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
