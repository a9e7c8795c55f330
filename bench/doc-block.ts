import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const FILE = path.resolve(__dirname, '..', 'docs', 'benchmarks.md');

/** One line on the machine and the moment of a run, for the head of a generated block. */
export function runLine(details: string): string {
  return (
    `Last run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus().length} cores, Node ${process.versions.node}, ` +
    `load average ${os.loadavg()[0].toFixed(1)} at the end; ${details}`
  );
}

/** Replaces benchmark `name`'s generated block of docs/benchmarks.md (between its markers), or appends it. */
export function writeDocBlock(name: string, body: string): void {
  const begin = `<!-- bench ${name}: begin -->`;
  const end = `<!-- bench ${name}: end -->`;
  const block = `${begin}\n${body}\n${end}`;
  const doc = fs.readFileSync(FILE, 'utf8');
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  fs.writeFileSync(FILE, i >= 0 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${block}\n`);
}
