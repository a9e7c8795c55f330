// What `npm run cli -- <command>` runs (after generating the proto code): the admin CLI's bundle, the one the image
// runs (`<image> cli`), made from src/main.ts again first when a source is newer (deploy/cli-ready.mjs). It is
// loaded in this very process, as deploy/local/start.mjs loads the launcher's, by require: the bundle is CommonJS,
// and import() would first scan its 3.6 MB for export names (0.1-0.6 s before a restore marks its target). Without
// source maps, as in the image: the CLI never prints a stack trace, and reading the map would double its start-up.
import { createRequire } from 'node:module';
import { CLI_BUNDLE } from '../cli-ready.mjs';

createRequire(import.meta.url)(CLI_BUNDLE);
