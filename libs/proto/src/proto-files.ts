import * as path from 'node:path';
import * as fs from 'node:fs';

/** Directory holding the .proto sources; found by walking up from here so it works from source and from dist. */
export const PROTO_ROOT: string = findProtoRoot(__dirname);

function findProtoRoot(start: string): string {
  let dir = start;
  for (;;) {
    const candidate = path.join(dir, 'proto', 'buf.yaml');
    if (fs.existsSync(candidate)) return path.join(dir, 'proto');
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve('proto');
    dir = parent;
  }
}

/** The .proto files of one service package (e.g. "orgsteams"), relative to PROTO_ROOT, for gRPC reflection. */
export function protoFilesOf(pkg: string): string[] {
  const dir = path.join(PROTO_ROOT, 'platformadmin', pkg, 'v1');
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.proto'))
    .map((f) => path.posix.join('platformadmin', pkg, 'v1', f));
}
