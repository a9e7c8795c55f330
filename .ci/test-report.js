// What .ci/run prints after the tests: each tier's time (reports/jest-<tier>.json, written by jest.tiers.js), the
// ten slowest files of the whole suite, and the closing "N passed, N failed" line from the real jest counts, a
// suite that failed to load and each failed build or check (the first argument) counting as one failure.
const fs = require('node:fs');
const path = require('node:path');
const { TIERS } = require('../jest.tiers');

const extraFailures = Number(process.argv[2] ?? 0);
const root = path.join(__dirname, '..');
const secs = (ms) => `${(ms / 1000).toFixed(1).padStart(7)} s`;

/** A failure's first lines without colours: the assertion, what was expected and received, and where. */
const firstLines = (message, max = 14) =>
  message
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, max)
    .map((l) => l.slice(0, 200));

let passed = 0;
let failed = extraFailures;
const files = [];
const failures = [];
for (const tier of TIERS) {
  const file = path.join(root, 'reports', `jest-${tier}.json`);
  if (!fs.existsSync(file)) {
    console.log(`${tier.padEnd(12)} did not run (no reports/jest-${tier}.json)`);
    failed += 1;
    continue;
  }
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  const end = Math.max(r.startTime, ...r.testResults.map((s) => s.endTime));
  // A suite that failed to load has no test results but is a failure all the same.
  const broken = r.testResults.filter((s) => s.status === 'failed' && s.assertionResults.length === 0).length;
  passed += r.numPassedTests;
  failed += r.numFailedTests + broken;
  console.log(
    `${tier.padEnd(12)} ${secs(end - r.startTime)}  ${String(r.numTotalTestSuites).padStart(4)} files  ` +
      `${r.numPassedTests} passed, ${r.numFailedTests + broken} failed`,
  );
  for (const s of r.testResults) {
    const file = path.relative(root, s.name);
    files.push({ tier, file, ms: s.endTime - s.startTime });
    if (s.status !== 'failed') continue;
    const names = s.assertionResults
      .filter((a) => a.status === 'failed')
      .map((a) => ({ name: a.fullName, lines: firstLines((a.failureMessages ?? []).join('\n')) }));
    // The first line of a suite's message says why it failed to load or which hook timed out.
    failures.push({ tier, file, names, why: (s.message ?? '').split('\n').find((l) => l.trim()) ?? '' });
  }
}
// CI keeps only the end of the log, so what failed is said here, next to the counts.
if (failures.length > 0) {
  console.log('what failed:');
  for (const f of failures) {
    console.log(`  ${f.tier.padEnd(12)} ${f.file}`);
    for (const n of f.names) {
      console.log(`      ${n.name}`);
      for (const l of n.lines) console.log(`          ${l}`);
    }
    if (f.names.length === 0) console.log(`      ${f.why.trim().slice(0, 200)}`);
  }
}
console.log('the ten slowest files:');
for (const f of files.sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`  ${secs(f.ms)}  ${f.tier.padEnd(12)} ${f.file}`);
console.log(`${passed} passed, ${failed} failed`);
