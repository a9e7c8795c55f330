// Makes sure the generated proto code is there and newer than every .proto file, generating it only when it is
// not: the admin CLI, the simulator and the license tool start in a fraction of a second instead of paying for
// Nx and buf on every call. Generation output goes to stderr, so the tools' own stdout (secrets) stays clean.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const gen = path.join(root, 'libs/proto/src/gen');

/** The newest modification time of the files under `dir` (0 when there are none). */
function newest(dir) {
  let t = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) t = Math.max(t, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return t;
}

const generatedAt = fs.existsSync(gen) ? newest(gen) : 0;
if (generatedAt === 0 || newest(path.join(root, 'proto')) > generatedAt) {
  const res = spawnSync(path.join(root, 'node_modules/.bin/nx'), ['run', 'proto:generate'], {
    cwd: root,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  process.exit(res.status ?? 1);
}
