import * as fs from 'node:fs';
import * as path from 'node:path';
import { apiDocument } from './openapi';
import { ROUTES } from './sections';

/**
 * Writes the API document of every row (all deployments' gates open) to the file named on the command line. The
 * web console's API types are generated from it, so a route change that breaks a console screen breaks its build.
 */
if (require.main === module) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: write-api-document <file.json>');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(apiDocument(ROUTES), null, 1) + '\n');
}
