// The test suite's three tiers, told apart by the file's name (docs/testing.md, "Which tier"):
//
//   unit         x.test.ts, x.test.tsx   nothing outside the jest process: no database (not even the embedded one),
//                                        no bus, no browser, no child process; stand-in backends on loopback are fine
//   integration  x.int.test.ts           one app or lib against real Postgres and NATS (or the embedded database)
//                                        or a flow across the gateway and the few backends it crosses
//   e2e          x.e2e.test.ts           the platform as users run it: the launcher, the production topology, drills,
//                                        the NATS cluster, the browser, the Python client
//
// jest.preset.js narrows every project to the tier named by TEST_TIER (all three when unset). Run as a script, this
// file runs the tiers one after another, each a jest run of its own with its own report (reports/jest-<tier>.json)
// and its time printed, and exits non-zero when any tier failed:
//
//   node jest.tiers.js [unit|integration|e2e ...] [jest arguments]
//
// Plain JavaScript: jest loads it from its configuration, before anything is transformed.
const TIERS = ['unit', 'integration', 'e2e'];

/** Path patterns (jest's testPathIgnorePatterns) that keep a project to `tier`'s files. */
function ignoredOutside(tier) {
  switch (tier) {
    case undefined:
    case '':
    case 'all':
      return [];
    case 'unit':
      return ['\\.(int|e2e)\\.test\\.tsx?$'];
    case 'integration':
      return ['^(?!.*\\.int\\.test\\.tsx?$)'];
    case 'e2e':
      return ['^(?!.*\\.e2e\\.test\\.tsx?$)'];
    default:
      throw new Error(`TEST_TIER=${tier}: expected one of ${TIERS.join(', ')}`);
  }
}

/**
 * Parallel jest workers per tier on the two-core machine the suite is sized for. Unit files are CPU-bound: one
 * worker per core. Integration and end-to-end files spend much of their time waiting on Postgres, NATS, child
 * processes and timers, so a third worker fills the cores better. TEST_WORKERS overrides all three.
 */
const WORKERS = { unit: 2, integration: 3, e2e: 3 };

/**
 * The default bound of a test or hook (jest's testTimeout, which only the command line or the root config sets). A
 * bound, not a wait: integration and end-to-end files wait on databases, processes and the bus, which a busy two-core
 * machine running several workers slows several times over; a unit test has no such excuse.
 */
const TIMEOUT_MS = { unit: 30_000, integration: 120_000, e2e: 120_000 };

/**
 * A worker whose heap is past this after a test file is replaced by a new one (jest's workerIdleMemoryLimit). Jest
 * gives every file a module registry of its own, and what a file leaves reachable (a timer, a listener, a cached
 * client) keeps its registry alive: a worker's heap grew file by file to over 1 GB, and the collector's work on it
 * slowed every later file (the check walk's comparisons took 20-36 s late in a worker, 5 s early). A new worker
 * costs about half a second; the unit tier is a fifth quicker for it (docs/testing.md).
 */
const WORKER_MEMORY_LIMIT = '800MB';

module.exports = { TIERS, ignoredOutside, WORKERS, TIMEOUT_MS, WORKER_MEMORY_LIMIT };

if (require.main === module) {
  const { spawnSync } = require('node:child_process');
  const fs = require('node:fs');
  const path = require('node:path');

  // Leading tier names choose the tiers; everything else goes to jest (a path pattern, -t, ...).
  const argv = process.argv.slice(2);
  const named = [];
  while (argv.length && TIERS.includes(argv[0])) named.push(argv.shift());
  const jestArgs = argv;
  const tiers = named.length ? named : TIERS;
  fs.mkdirSync(path.join(__dirname, 'reports'), { recursive: true });

  const results = [];
  for (const tier of tiers) {
    const report = path.join(__dirname, 'reports', `jest-${tier}.json`);
    fs.rmSync(report, { force: true });
    const workers = process.env.TEST_WORKERS ?? String(WORKERS[tier]);
    console.log(`\n== ${tier} tier (${workers} workers)`);
    const started = Date.now();
    const env = { ...process.env, TEST_TIER: tier };
    // The unit tier must pass with no Postgres and no NATS: it is not told where they are.
    if (tier === 'unit') for (const name of ['TEST_DATABASE_URL', 'TEST_NATS_URL']) delete env[name];
    // The launcher's and the admin CLI's bundles, made once here rather than by the first of the parallel files that
    // start `npm start` or `npm run cli`.
    if (tier === 'e2e') {
      for (const ready of ['deploy/launcher-ready.mjs', 'deploy/cli-ready.mjs']) {
        spawnSync(process.execPath, [path.join(__dirname, ready)], { stdio: 'inherit', cwd: __dirname });
      }
    }
    const run = spawnSync(
      process.execPath,
      [
        '--max-old-space-size=4096',
        '--experimental-vm-modules',
        '--disable-warning=ExperimentalWarning',
        path.join(__dirname, 'node_modules/jest/bin/jest.js'),
        '--ci',
        `--maxWorkers=${workers}`,
        `--testTimeout=${TIMEOUT_MS[tier]}`,
        `--workerIdleMemoryLimit=${WORKER_MEMORY_LIMIT}`,
        '--passWithNoTests',
        '--json',
        `--outputFile=${report}`,
        ...jestArgs,
      ],
      { stdio: 'inherit', env, cwd: __dirname },
    );
    const seconds = (Date.now() - started) / 1000;
    results.push({ tier, seconds, status: run.status ?? 1 });
    console.log(`== ${tier} tier: ${run.status === 0 ? 'passed' : 'FAILED'} in ${seconds.toFixed(0)} s`);
  }
  console.log('\n== tiers');
  for (const r of results) console.log(`  ${r.tier.padEnd(12)} ${r.status === 0 ? 'passed' : 'FAILED'}  ${r.seconds.toFixed(0).padStart(5)} s`);
  process.exit(results.some((r) => r.status !== 0) ? 1 : 0);
}
