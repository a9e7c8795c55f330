/** `npm run bench [name]`: runs one benchmark (default: all) and prints its JSON result. */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const BENCHMARKS: Record<string, string> = {
  'api-reference': 'api-reference.ts',
  'auth-hook': 'auth-hook.ts',
  'authz-check': 'authz-check.ts',
  'authz-scale': 'authz-scale.ts',
  'embedded-statements': 'embedded-statements.ts',
  'grpc-check': 'grpc-check.ts',
  import: 'import.ts',
  http: 'http.ts',
  ingestion: 'ingestion.ts',
  licenses: 'licenses.ts',
  'sign-in': 'sign-in.ts',
  'usage-reports': 'usage-reports.ts',
};

// `npm run bench -- http embedded`: a benchmark's own arguments follow its name.
const wanted = process.argv[2] ? [process.argv[2]] : Object.keys(BENCHMARKS);
const extra = process.argv.slice(3);
for (const name of wanted) {
  const file = BENCHMARKS[name];
  if (!file) {
    console.error(`unknown benchmark ${name}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
    process.exit(64);
  }
  const res = spawnSync(
    process.execPath,
    [require.resolve('tsx/cli'), '--tsconfig', 'tsconfig.base.json', path.join('bench', file), ...extra],
    {
      stdio: 'inherit',
    },
  );
  if (res.status !== 0) process.exit(res.status ?? 1);
}
