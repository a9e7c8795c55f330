import { runLicenseCli } from './license-cli';

/** Entry point of `npm run license -- <command>` (through license.mjs). */
runLicenseCli(process.argv.slice(2), {
  env: process.env,
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  readStdin: async () => '',
}).then((code) => {
  process.exitCode = code;
});
