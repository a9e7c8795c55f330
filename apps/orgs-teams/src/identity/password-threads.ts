import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Threads of their own for scrypt, so that a sign-in never stalls the other requests of its process (docs/decisions.md,
 * "Password hashing on threads of its own"). Node's asynchronous scrypt runs in libuv's pool of four threads, which
 * the process shares with file reads, DNS lookups and compression: four sign-ins at once held all four for ~60 ms each,
 * and with them every response waiting to be compressed, and on two cores they took both from the event loop too. Here
 * each derivation runs synchronously on one of `size` worker threads (one per core), one at a time per thread, so at
 * most as many run as there are cores and libuv's pool stays free. One thread fewer than the cores was measured too:
 * the reads beside sign-ins fared no better and the sign-ins queued (docs/benchmarks.md, "Sign-ins beside reads").
 *
 * The worker's code is given inline (eval) rather than as a file beside this one: `npm start` and the images run
 * bundles, in which no such file would be found.
 */
const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', ({ id, password, salt, keyLength, options }) => {
  try {
    parentPort.postMessage({ id, key: scryptSync(password, Buffer.from(salt), keyLength, options) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

interface Task {
  id: number;
  password: string;
  salt: Buffer;
  keyLength: number;
  options: { N: number; r: number; p: number; maxmem: number };
  resolve: (key: Buffer) => void;
  reject: (err: Error) => void;
}

interface Thread {
  worker: Worker;
  task?: Task;
}

export class PasswordThreads {
  private readonly threads: Thread[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;

  constructor(readonly size = availableParallelism()) {}

  /** scrypt's key for `password` and `salt`, derived on one of the threads (queued while all are busy). */
  derive(password: string, salt: Buffer, keyLength: number, options: Task['options']): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, password, salt, keyLength, options, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const thread = this.threads.find((t) => !t.task) ?? (this.threads.length < this.size ? this.start() : undefined);
      if (!thread) return;
      const task = this.queue.shift()!;
      thread.task = task;
      // The worker is held only while it works: an idle pool never keeps the process from exiting.
      thread.worker.ref();
      const { id, password, salt, keyLength, options } = task;
      thread.worker.postMessage({ id, password, salt, keyLength, options });
    }
  }

  private start(): Thread {
    const thread: Thread = { worker: new Worker(WORKER_CODE, { eval: true }) };
    thread.worker.unref();
    thread.worker.on('message', (answer: { id: number; key?: Uint8Array; error?: string }) => {
      const task = thread.task;
      if (!task || task.id !== answer.id) return;
      thread.task = undefined;
      thread.worker.unref();
      if (answer.key) task.resolve(Buffer.from(answer.key));
      else task.reject(new Error(`scrypt failed: ${answer.error}`));
      this.dispatch();
    });
    // A thread that died (out of memory, killed) fails its derivation and is replaced by the next one needed.
    const lost = (err: Error) => {
      const index = this.threads.indexOf(thread);
      if (index >= 0) this.threads.splice(index, 1);
      thread.task?.reject(err);
      thread.task = undefined;
      this.dispatch();
    };
    thread.worker.on('error', lost);
    thread.worker.on('exit', (code) => lost(new Error(`the password thread exited (${code})`)));
    this.threads.push(thread);
    return thread;
  }
}
