// What `npm run cli -- <command>` runs (after generating the proto code): the admin CLI's bundle, the one the image
// runs (`<image> cli`), made from src/main.ts again first when a source is newer (deploy/cli-ready.mjs). It is
// imported in this very process, as deploy/local/start.mjs imports the launcher's. Without source maps, as in the
// image: the CLI never prints a stack trace, and reading the map would double its start-up.
import { pathToFileURL } from 'node:url';
import { CLI_BUNDLE } from '../cli-ready.mjs';

await import(pathToFileURL(CLI_BUNDLE).href);
