// What `npm start` runs before the launcher: makes sure the launcher's bundle (dist/deploy/local/main.js, every app
// and library inlined, npm packages left to node_modules) is there and newer than every file it was made from,
// bundling again only when it is not (about a second). The platform then runs plain JavaScript, as the images do,
// rather than TypeScript transformed at load by tsx: the transformed sources were 36 MB of the live heap, which every
// collection walked. Freshness is read from esbuild's metafile, which lists each input; the output goes to stderr.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './freshness.mjs';

export const LAUNCHER_BUNDLE = path.join(ROOT, 'dist/deploy/local/main.js');
const ENTRY = 'deploy/local/src/start.ts';

function fresh() {
  const meta = `${LAUNCHER_BUNDLE}.meta.json`;
  if (!fs.existsSync(LAUNCHER_BUNDLE) || !fs.existsSync(meta)) return false;
  const builtAt = fs.statSync(LAUNCHER_BUNDLE).mtimeMs;
  const inputs = [...Object.keys(JSON.parse(fs.readFileSync(meta, 'utf8')).inputs), 'package-lock.json', 'tsconfig.base.json'];
  return inputs.every((input) => {
    const file = path.join(ROOT, input);
    return fs.existsSync(file) && fs.statSync(file).mtimeMs <= builtAt;
  });
}

if (!fresh()) {
  const res = spawnSync(process.execPath, [path.join(ROOT, 'deploy/docker/bundle.js'), 'local', ENTRY], {
    cwd: ROOT,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (res.status !== 0) process.exit(res.status ?? 1);
}
