import { Worker } from 'node:worker_threads';

/**
 * The embedded database (PGlite, a WASM build of Postgres) in a worker thread. PGlite runs every statement
 * synchronously inside WASM; on the request thread that was about half of the busy time of an
 * authenticated GET, and every app of `npm start` waited on it. In a worker, statements run on
 * another core while the request thread parses, checks and answers. knex-pglite talks to this object as to
 * a PGlite instance (`waitReady`, `query`, `close`), so knex, its single connection and its transactions
 * work as before; every statement is still serialised on the one connection.
 */

/** The part of the PGlite API knex-pglite uses. */
export interface PGliteLike {
  waitReady: Promise<void>;
  query(sql: string, params?: unknown[], options?: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

// The worker's code: plain CommonJS evaluated as a string, so the same worker runs under tsx, jest and the
// bundled apps alike (no separate file to ship). PGlite's path comes resolved from the main thread.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglitePath);
const db = new PGlite(workerData.dataDir);
const ready = db.waitReady.then(
  () => parentPort.postMessage({ ready: true }),
  (err) => parentPort.postMessage({ ready: false, error: { message: String(err && err.message || err) } }),
);
parentPort.on('message', async (msg) => {
  await ready;
  if (msg.close) {
    await db.close();
    parentPort.postMessage({ id: msg.id, closed: true });
    return;
  }
  try {
    const res = await db.query(msg.sql, msg.params, msg.options);
    parentPort.postMessage({ id: msg.id, result: { rows: res.rows, fields: res.fields, affectedRows: res.affectedRows } });
  } catch (err) {
    // Postgres errors keep their fields (code, constraint, detail...) so callers tell a unique violation apart.
    const error = {};
    for (const key of Object.getOwnPropertyNames(err)) {
      const v = err[key];
      if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) error[key] = v;
    }
    error.message = err.message;
    parentPort.postMessage({ id: msg.id, error });
  }
});
`;

type Pending = { resolve(v: unknown): void; reject(e: unknown): void };

/** Opens PGlite on `dataDir` in a worker thread; `close()` ends the worker. */
export function openPGliteWorker(dataDir: string): PGliteLike {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { dataDir, pglitePath: require.resolve('@electric-sql/pglite') },
  });
  const pending = new Map<number, Pending>();
  let next = 1;
  let failed: Error | undefined;
  const waitReady = new Promise<void>((resolve, reject) => {
    worker.once('message', (msg: { ready: boolean; error?: { message: string } }) =>
      msg.ready ? resolve() : reject(new Error(`the embedded database did not open: ${msg.error?.message}`)),
    );
  });
  worker.on('message', (msg: { id?: number; result?: unknown; error?: Record<string, unknown>; closed?: boolean }) => {
    if (msg.id === undefined) return;
    const p = pending.get(msg.id);
    pending.delete(msg.id);
    if (!p) return;
    if (msg.error) p.reject(Object.assign(new Error(String(msg.error.message)), msg.error));
    else p.resolve(msg.result);
  });
  worker.on('error', (err) => {
    failed = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  });
  const send = (msg: Record<string, unknown>) =>
    new Promise<unknown>((resolve, reject) => {
      if (failed) return reject(failed);
      const id = next++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...msg, id });
    });
  return {
    waitReady,
    // Parsers and serializers are functions, which cannot cross threads; knex passes none.
    query: (sql, params, options) => send({ sql, params, options: options && cloneable(options) }),
    async close() {
      await send({ close: true });
      await worker.terminate();
    },
  };
}

const cloneable = (options: Record<string, unknown>) => Object.fromEntries(Object.entries(options).filter(([, v]) => typeof v !== 'function'));
