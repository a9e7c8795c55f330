// What .ci/run prints after the tests: each tier's time (reports/jest-<tier>.json, written by jest.tiers.js), the
// ten slowest files of the whole suite, and the closing "N passed, N failed" line from the real jest counts, a
// suite that failed to load and each failed build or check (the first argument) counting as one failure.
const fs = require('node:fs');
const path = require('node:path');
const { TIERS } = require('../jest.tiers');

const extraFailures = Number(process.argv[2] ?? 0);
const root = path.join(__dirname, '..');
const secs = (ms) => `${(ms / 1000).toFixed(1).padStart(7)} s`;

let passed = 0;
let failed = extraFailures;
const files = [];
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
  for (const s of r.testResults) files.push({ tier, file: path.relative(root, s.name), ms: s.endTime - s.startTime });
}
console.log('the ten slowest files:');
for (const f of files.sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`  ${secs(f.ms)}  ${f.tier.padEnd(12)} ${f.file}`);
console.log(`${passed} passed, ${failed} failed`);
