import { runCli } from './cli';

/** Entry point of `npm run cli -- <command>` (through cli.mjs) and of the image's `cli` bundle. */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('type the password and press Enter, then Ctrl-D (it is shown as typed)\n');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// stdout carries only results (a password, a token, the configuration): anything a library prints goes to stderr.
console.log = console.error;
console.info = console.error;

runCli(process.argv.slice(2), {
  env: process.env,
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  readStdin,
}).then((code) => {
  process.exitCode = code;
  // PGlite's WASM runtime sets process.exitCode to 0 as it shuts down, possibly after this line: say it last.
  process.on('exit', () => (process.exitCode = code));
  // Normally nothing is left and the process ends now, its output flushed; a connection that lingers must not hold it.
  setTimeout(() => process.exit(code), 2_000).unref();
});
