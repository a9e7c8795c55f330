import { Worker } from 'node:worker_threads';

/** How long the server may take to stop cleanly once its launcher is gone, before it is ended. */
const PARENT_GONE_GRACE_MS = 500;
/** How often the launcher's parent is looked for. */
const PARENT_POLL_MS = 100;

/**
 * The watchdog, on a thread of its own so that a busy or blocked event loop cannot delay it (under load the main
 * thread's timers fired seconds late, and the process outlived its launcher by up to 2.7 s, holding DATA_DIR): it looks
 * for the parent every PARENT_POLL_MS, tells the main thread once it is gone, and if the process still lives
 * PARENT_GONE_GRACE_MS later, says so on stderr (written directly: the main thread may be the one that is stuck) and
 * ends it with SIGKILL.
 */
const WATCHDOG = `
const { parentPort, workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const { parent, pollMs, graceMs } = workerData;
const cell = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => Atomics.wait(cell, 0, 0, ms);
while (process.ppid === parent) sleep(pollMs);
parentPort.postMessage(parent);
sleep(graceMs);
writeSync(2, '[platform] not stopped within ' + graceMs + ' ms: ending the process\\n');
process.kill(process.pid, 'SIGKILL');
`;

/**
 * Calls `onGone` once this process gets another parent, which happens when its parent dies (it is then re-parented to
 * init or a subreaper), and ends the process PARENT_GONE_GRACE_MS later if it has not ended itself. A server left
 * behind by a killed `npm start` would otherwise keep serving, holding DATA_DIR and the port. A process started by
 * init itself has nothing to watch.
 */
export function whenParentGone(onGone: (parent: number) => void): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  const watchdog = new Worker(WATCHDOG, { eval: true, workerData: { parent, pollMs: PARENT_POLL_MS, graceMs: PARENT_GONE_GRACE_MS } });
  // It never keeps the process alive, and its own failure (it cannot start) only costs the watch.
  watchdog.unref();
  watchdog.once('message', onGone);
  watchdog.once('error', (err) => process.stderr.write(`[platform] the launcher watchdog failed: ${err.message}\n`));
}
