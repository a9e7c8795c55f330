import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { alive, ROOT } from './launcher';

// The server of a killed `npm start` ends even when its event loop is stuck: the watch of its launcher runs on a
// thread of its own. Here the "server" is a process whose main thread, once told its launcher is gone, blocks for a
// minute (as a long synchronous stop or a starved event loop would); its launcher is killed with SIGKILL, and the
// server must be gone long before its main thread could have ended it, having said why. The watchdog's own promptness
// (half a second after the parent is gone, nominally) is not timed here: on a loaded machine a process's wake-up is
// late by whatever the scheduler gives it, and a test that races the clock fails for the machine, not the code.

describe("the launcher's watchdog", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parent-watch-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('ends a server whose main thread is stuck once its launcher is killed, saying so', async () => {
    const server = path.join(dir, 'server.mts');
    fs.writeFileSync(
      server,
      `import { whenParentGone } from ${JSON.stringify(path.join(ROOT, 'deploy/local/src/parent-watch.ts'))};
       whenParentGone(() => {
         process.stderr.write('stopping\\n');
         const until = Date.now() + 60_000;
         while (Date.now() < until);
       });
       setInterval(() => {}, 1_000);
       process.stdout.write(String(process.pid) + '\\n');`,
    );
    const log = path.join(dir, 'server.log');
    // The launcher: starts the server, its stderr into a file (which outlives the launcher), and waits to be killed.
    const launcher = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
         const c = require('node:child_process').spawn(process.execPath, ['--import', 'tsx', ${JSON.stringify(server)}], {
           stdio: ['ignore', 'pipe', fs.openSync(${JSON.stringify(log)}, 'w')],
           cwd: ${JSON.stringify(ROOT)},
         });
         c.stdout.pipe(process.stdout);
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      let timer: NodeJS.Timeout | undefined;
      const serverPid = await new Promise<number>((resolve, reject) => {
        launcher.stdout!.on('data', (d: Buffer) => resolve(Number(String(d).trim())));
        launcher.once('exit', (code) => reject(new Error(`the launcher exited with ${code}`)));
        timer = setTimeout(() => reject(new Error(`no server within 30 s: ${fs.readFileSync(log, 'utf8')}`)), 30_000);
      }).finally(() => clearTimeout(timer));
      const killedAt = Date.now();
      launcher.kill('SIGKILL');
      // Well within the main thread's minute: only the watchdog can have ended it this soon.
      while (alive(serverPid) && Date.now() - killedAt < 30_000) await new Promise((r) => setTimeout(r, 10));
      expect(alive(serverPid)).toBe(false);
      expect(fs.readFileSync(log, 'utf8')).toBe('stopping\n[platform] not stopped within 500 ms: ending the process\n');
    } finally {
      launcher.kill('SIGKILL');
    }
  }, 90_000);
});
