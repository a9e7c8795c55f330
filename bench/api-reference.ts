/**
 * `npm run bench -- api-reference`: how long the API reference takes to show something useful, in headless Chromium,
 * on `npm start`: the time from navigating to `/api/v1/docs/` until its first section's operations are on screen,
 * and the same for Swagger UI over the same document (`/api/v1/docs/swagger/`, what `/api/v1/docs/` was before:
 * until its first operation is drawn). Each page is opened BENCH_RUNS times (default 5), each time in a fresh browser
 * context (an empty cache, as a first visit). Prints JSON on stdout and writes docs/benchmarks.md's block; progress goes
 * to stderr.
 *
 * Environment: BENCH_RUNS; CHROMIUM_PATH (else Debian's /usr/bin/chromium).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { runLine, writeDocBlock } from './doc-block';
import { freePort, runPlatform, waitFor } from './support';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const progress = (msg: string) => process.stderr.write(`[bench api-reference] ${msg}\n`);

interface Page {
  name: string;
  path: string;
  /** What on the page means a reader can start reading: the first operation of the first section, drawn. */
  firstUseful: string;
}

const PAGES: Page[] = [
  { name: 'the reference page (/api/v1/docs/)', path: '/api/v1/docs/', firstUseful: 'details.op summary' },
  { name: 'Swagger UI (/api/v1/docs/swagger/), the page before', path: '/api/v1/docs/swagger/', firstUseful: '.opblock .opblock-summary' },
];

interface Timing {
  page: string;
  runs: number[];
  p50: number;
  min: number;
  max: number;
  /** What the browser received for the page, its scripts, styles and the document it reads (bodies as sent, compressed). */
  transferredKb: number;
}

async function time(browser: Browser, base: string, page: Page): Promise<Timing> {
  const runs: number[] = [];
  let transferred = 0;
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const tab = await context.newPage();
    let bytes = 0;
    // A request still finishing when the context closes is not counted.
    tab.on('requestfinished', (req) =>
      req.sizes().then(
        (s) => (bytes += s.responseBodySize),
        () => undefined,
      ),
    );
    const began = performance.now();
    await tab.goto(`${base}${page.path}`, { waitUntil: 'commit' });
    await tab.locator(page.firstUseful).first().waitFor({ state: 'visible', timeout: 120_000 });
    runs.push(Math.round(performance.now() - began));
    await tab.waitForLoadState('networkidle');
    transferred = bytes;
    await context.close();
    progress(`${page.name}: ${runs.at(-1)} ms`);
  }
  const sorted = [...runs].sort((a, b) => a - b);
  return {
    page: page.name,
    runs,
    p50: sorted[Math.floor(sorted.length / 2)],
    min: sorted[0],
    max: sorted.at(-1)!,
    transferredKb: Math.round(transferred / 1024),
  };
}

async function main() {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-api-reference-'));
  const platform = runPlatform('deploy/local/start.mjs', { HTTP_PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  const base = `http://127.0.0.1:${port}`;
  let browser: Browser | undefined;
  try {
    progress('starting the platform (npm start, embedded database)');
    await waitFor(`${base}/api/v1/version`, platform);
    const document = await (await fetch(`${base}/api/v1/openapi.json`)).text();
    const operations = Object.values(JSON.parse(document).paths as Record<string, object>).reduce(
      (n, ops) => n + Object.keys(ops).length,
      0,
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking'],
    });
    const timings: Timing[] = [];
    for (const page of PAGES) timings.push(await time(browser, base, page));
    const result = { documentKb: Math.round(document.length / 1024), operations, runs: RUNS, timings };
    console.log(JSON.stringify(result, null, 2));
    writeDocBlock(
      'api-reference',
      [
        runLine(
          `headless Chromium ${browser.version()} at 1280 × 900, a fresh context (empty cache) each run; the document: ` +
            `${result.documentKb} KB, ${operations} operations.`,
        ),
        '',
        '| page | time to its first operation on screen, p50 | min | max | runs (ms) | transferred |',
        '|---|---|---|---|---|---|',
        ...timings.map((t) => `| ${t.page} | ${t.p50} ms | ${t.min} ms | ${t.max} ms | ${t.runs.join(', ')} | ${t.transferredKb} KB |`),
      ].join('\n'),
    );
  } finally {
    await browser?.close();
    platform.kill('SIGINT');
    await new Promise((r) => (platform.exitCode === null ? platform.once('exit', r) : r(undefined)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
