// proto:generate: the TypeScript of every .proto file (buf generate with buf.gen.yaml) into libs/proto/src/gen,
// rewriting only the files whose text changed and removing those no .proto makes any more. Generated in a scratch
// directory first: a file whose text is the same keeps its modification time, so the bundles made from it (their
// freshness is read from those times, deploy/freshness.mjs) stay fresh when nothing changed, as they do after
// `npm run build` and the generation every `npm test` runs first. `.generated` is touched every time, so the
// generated code reads as newer than the .proto files it was made from (freshness.mjs, protoStale).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const PROTO = import.meta.dirname;
const ROOT = path.resolve(PROTO, '..');
const GEN = path.join(ROOT, 'libs/proto/src/gen');
const STAMP = '.generated';

/** Files under `dir`, as paths relative to it. */
function filesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'proto-generate-'));
try {
  // buf puts each plugin's `out` (../libs/proto/src/gen, relative to this folder) under --output: one level down in
  // the scratch directory, so that `..` stays inside it.
  const base = path.join(scratch, 'proto');
  execFileSync(path.join(ROOT, 'node_modules/.bin/buf'), ['generate', '--output', base], { cwd: PROTO, stdio: 'inherit' });
  const made = path.join(scratch, 'libs/proto/src/gen');
  const fresh = new Set(filesUnder(made));
  let written = 0;
  for (const file of fresh) {
    const text = fs.readFileSync(path.join(made, file));
    const target = path.join(GEN, file);
    if (fs.existsSync(target) && fs.readFileSync(target).equals(text)) continue;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    // Whole or not at all: a process reading the file meanwhile finds the old text or the new one.
    fs.writeFileSync(`${target}.tmp`, text);
    fs.renameSync(`${target}.tmp`, target);
    written++;
  }
  let removed = 0;
  for (const file of filesUnder(GEN)) {
    if (file === STAMP || fresh.has(file)) continue;
    fs.rmSync(path.join(GEN, file));
    removed++;
  }
  fs.mkdirSync(GEN, { recursive: true });
  fs.writeFileSync(path.join(GEN, STAMP), `${new Date().toISOString()}\n`);
  console.log(`libs/proto/src/gen: ${fresh.size} files, ${written} written, ${removed} removed`);
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
