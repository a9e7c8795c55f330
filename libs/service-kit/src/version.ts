import * as fs from 'node:fs';
import * as path from 'node:path';
import { Gauge } from '@platform/telemetry';

/** The root package.json, found by walking up from here (works from source, bundles and the image). */
function rootPackageVersion(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'platform' && pkg.version) return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new Error('platform package.json not found above ' + start);
  }
}

/** Semantic version of the platform: one number for every service of a release, from the root package.json. */
export const PLATFORM_VERSION: string = rootPackageVersion(__dirname);

// Which release and runtime this process runs, as the `*_build_info` gauges of other services say it (always 1).
new Gauge('platform_build_info', 'Always 1; the labels name the platform release and the Node.js version this process runs.').source(
  (add) => add({ version: PLATFORM_VERSION, node_version: process.version }, 1),
);
