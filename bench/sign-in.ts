/**
 * `npm run bench -- sign-in`: what a password check costs, to the other requests of its process and to itself. On
 * `npm start` (one process, embedded database), the org GET is asked at a steady rate, first alone, then while sign-ins
 * run beside it: loops that create and delete a token with Basic credentials, as a Gitea client does. Then a soak: the
 * org GET at BENCH_SOAK_READ_RATE a second with, beside it, Basic token creates and deletes arriving at
 * BENCH_SOAK_SIGN_INS a second whatever the answers take (an open loop, as clients arrive), for BENCH_SOAK_S. It prints
 * the reads' latency, the sign-ins' own, their statuses, and one scrypt derivation timed alone in this process (the bare
 * cost of the hash, which the sign-ins' p99 is compared with), as JSON on stdout and into docs/benchmarks.md. Progress
 * goes to stderr.
 *
 * Environment: BENCH_DURATION_S (each of the first phases, default 10), BENCH_READ_RATE (reads a second, default 200),
 * BENCH_SIGN_INS (sign-in loops at once, default 2), BENCH_SOAK_S (default 120), BENCH_SOAK_READ_RATE (default 30),
 * BENCH_SOAK_SIGN_INS (Basic requests a second, creates and deletes, default 4).
 */
import { scryptSync, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import autocannon from 'autocannon';
import { runLine, writeDocBlock } from './doc-block';
import { freePort, runPlatform, waitFor } from './support';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const READ_RATE = Number(process.env.BENCH_READ_RATE ?? 200);
const SIGN_INS = Number(process.env.BENCH_SIGN_INS ?? 2);
const SOAK_S = Number(process.env.BENCH_SOAK_S ?? 120);
const SOAK_READ_RATE = Number(process.env.BENCH_SOAK_READ_RATE ?? 30);
const SOAK_SIGN_INS = Number(process.env.BENCH_SOAK_SIGN_INS ?? 4);
const PASSWORD = 'bench-admin-password';
const progress = (msg: string) => process.stderr.write(`[bench sign-in] ${msg}\n`);

interface Latency {
  count: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : 0);
const summary = (ms: number[], errors: number): Latency => {
  const sorted = [...ms].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return { count: ms.length, p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), max: round(sorted.at(-1) ?? 0), errors };
};

/** The org GET at `rate` a second for `seconds`, latencies as autocannon saw them. */
async function reads(url: string, token: string, rate = READ_RATE, seconds = DURATION_S): Promise<Latency> {
  const result = await autocannon({
    url,
    headers: { authorization: `token ${token}` },
    connections: 8,
    overallRate: rate,
    duration: seconds,
  });
  return {
    count: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors + result.non2xx,
  };
}

/** SIGN_INS loops creating and deleting a token with Basic credentials until `until`: each request's time. */
async function signIns(base: string, until: number): Promise<Latency> {
  const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
  const times: number[] = [];
  let errors = 0;
  const timed = async (method: string, url: string, body?: unknown) => {
    const began = performance.now();
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    times.push(performance.now() - began);
    if (!res.ok) errors += 1;
    return res.ok && res.status !== 204 ? res.json() : undefined;
  };
  await Promise.all(
    Array.from({ length: SIGN_INS }, async (_, loop) => {
      for (let i = 0; Date.now() < until; i++) {
        const created = (await timed('POST', '/users/root/tokens', { name: `sign-in-${loop}-${i}` })) as { id?: number } | undefined;
        if (created?.id) await timed('DELETE', `/users/root/tokens/${created.id}`);
      }
    }),
  );
  return summary(times, errors);
}

interface Soak {
  creates: Latency;
  deletes: Latency;
  statuses: Record<string, number>;
}

/**
 * Basic token creates and deletes arriving at SOAK_SIGN_INS a second for SOAK_S, half of them creates, each delete
 * sent once its create is answered: an open loop, so a slow answer does not slow the arrivals, as in a soak.
 */
async function soakSignIns(base: string): Promise<Soak> {
  const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
  const creates: number[] = [];
  const deletes: number[] = [];
  const statuses: Record<string, number> = {};
  let createErrors = 0;
  let deleteErrors = 0;
  const timed = async (method: string, url: string, times: number[], body?: unknown) => {
    const began = performance.now();
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch(() => undefined);
    times.push(performance.now() - began);
    const status = String(res?.status ?? 'network error');
    statuses[status] = (statuses[status] ?? 0) + 1;
    return res?.ok && res.status !== 204 ? res.json() : res?.ok;
  };
  const pairs = Math.round((SOAK_S * SOAK_SIGN_INS) / 2);
  const every = 2000 / SOAK_SIGN_INS;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: pairs }, async (_, i) => {
      await new Promise((r) => setTimeout(r, Math.max(0, start + i * every - performance.now())));
      const created = (await timed('POST', '/users/root/tokens', creates, { name: `soak-${i}` })) as { id?: number } | undefined;
      if (!created?.id) {
        createErrors += 1;
        return;
      }
      if (!(await timed('DELETE', `/users/root/tokens/${created.id}`, deletes))) deleteErrors += 1;
    }),
  );
  return { creates: summary(creates, createErrors), deletes: summary(deletes, deleteErrors), statuses };
}

async function main() {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sign-in-'));
  const platform = runPlatform('deploy/local/start.mjs', {
    HTTP_PORT: String(port),
    DATA_DIR: dataDir,
    PLATFORM_ADMIN_USERNAME: 'root',
    PLATFORM_ADMIN_PASSWORD: PASSWORD,
    LOG_LEVEL: 'warn',
  });
  const base = `http://127.0.0.1:${port}/api/v1`;
  try {
    progress('starting the platform (npm start, embedded database)');
    await waitFor(`${base}/version`, platform);
    const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
    const post = async (url: string, headers: Record<string, string>, body: unknown): Promise<any> => {
      const res = await fetch(`${base}${url}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const token = (await post('/users/root/tokens', { authorization: basic }, { name: 'reads' })).sha1 as string;
    await post('/orgs', { authorization: `token ${token}` }, { username: 'bench' });
    const orgUrl = `${base}/orgs/bench`;

    // One derivation with the platform's parameters, alone, in this process: what a check costs at the least.
    const salt = randomBytes(16);
    const began = performance.now();
    for (let i = 0; i < 5; i++) scryptSync(PASSWORD, salt, 32, { N: 1 << 15, r: 8, p: 1, maxmem: 128 * (1 << 15) * 8 * 2 });
    const scryptMs = Math.round(((performance.now() - began) / 5) * 10) / 10;

    progress(`warm-up, then ${DURATION_S} s of reads alone at ${READ_RATE}/s, then ${DURATION_S} s beside ${SIGN_INS} sign-in loops`);
    await autocannon({ url: orgUrl, headers: { authorization: `token ${token}` }, connections: 8, duration: 2 });
    await signIns(base, Date.now() + 2_000);
    const alone = await reads(orgUrl, token);
    const [beside, signIn] = await Promise.all([reads(orgUrl, token), signIns(base, Date.now() + DURATION_S * 1000)]);
    progress(`soak: ${SOAK_S} s of reads at ${SOAK_READ_RATE}/s beside ${SOAK_SIGN_INS} Basic token creates and deletes a second`);
    const [soakReads, soak] = await Promise.all([reads(orgUrl, token, SOAK_READ_RATE, SOAK_S), soakSignIns(base)]);
    const result = {
      scryptMs,
      readsAlone: alone,
      readsBesideSignIns: beside,
      signIns: signIn,
      readRate: READ_RATE,
      signInLoops: SIGN_INS,
      soak: { seconds: SOAK_S, readRate: SOAK_READ_RATE, signInsPerSecond: SOAK_SIGN_INS, reads: soakReads, ...soak },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    const row = (what: string, l: Latency) => `| ${what} | ${l.count} | ${l.p50} ms | ${l.p99} ms | ${l.max} ms | ${l.errors} |`;
    const statuses = Object.entries(soak.statuses)
      .map(([status, n]) => `${n} × ${status}`)
      .join(', ');
    writeDocBlock(
      'sign-in',
      [
        runLine(
          `${DURATION_S} s a phase, the org GET at ${READ_RATE} requests a second over 8 connections; ${SIGN_INS} sign-in loops; ` +
            `then a soak of ${SOAK_S} s: the org GET at ${SOAK_READ_RATE} a second beside ${SOAK_SIGN_INS} Basic token creates and deletes arriving a second.`,
        ),
        '',
        '| requests | count | p50 | p99 | max | errors |',
        '|---|---|---|---|---|---|',
        row('org GET, alone', alone),
        row(`org GET, beside ${SIGN_INS} sign-in loops`, beside),
        row('sign-ins: token create or delete with Basic credentials', signIn),
        row('soak: org GET', soakReads),
        row('soak: token create with Basic credentials', soak.creates),
        row('soak: token delete with Basic credentials', soak.deletes),
        '',
        `One scrypt derivation (N=2^15, r=8, p=1) alone in the bench's process: ${scryptMs} ms. Soak token creates: p99 ` +
          `${soak.creates.p99} ms in all, a derivation included where one was made; the soak's Basic answers: ${statuses}.`,
      ].join('\n'),
    );
  } finally {
    platform.kill('SIGINT');
    await new Promise((r) => (platform.exitCode === null ? platform.once('exit', r) : r(undefined)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
