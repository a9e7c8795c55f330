import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { isKept, keepsSchema } from './kept-statements';
import { ResultCache, type QueryAnswer, type ResultCacheOptions } from './result-cache';

/**
 * The embedded database (PGlite, a WASM build of Postgres) in a worker thread. PGlite runs every statement
 * synchronously inside WASM; on the request thread that was about half of the busy time of an
 * authenticated GET, and every app of `npm start` waited on it. In a worker, statements run on
 * another core while the request thread parses, checks and answers.
 *
 * PGlite has one connection, so statements run one at a time. knex still gets a pool of several sessions
 * (`session()`): each is a connection as knex sees it, and the worker runs what the sessions send in the
 * order it arrives, except that while one session is inside a transaction, only that session's statements
 * run and the others wait their turn (the worker asks PGlite whether a transaction is open after each
 * statement). So transactions never see each other's statements, as with one connection, but the worker
 * always has the next statement at hand: with a single knex connection it sat idle for the round trip of
 * every statement, waiting for the busy request thread to send the next one (measured: 45% of the worker
 * busy at the throughput ceiling).
 */

/** The part of the PGlite API knex-pglite uses, for one session. */
export interface PGliteLike {
  waitReady: Promise<void>;
  query(sql: string, params?: unknown[], options?: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

/** The worker: sessions for knex's pool, and the end of it all. */
export interface PGliteWorker {
  waitReady: Promise<void>;
  /** A new session: a connection as knex sees it. Closing it ends its open transaction, if any. */
  session(): PGliteLike;
  /** Closes the database and ends the worker. */
  close(): Promise<void>;
  /** The answers kept until the next write (result-cache.ts). */
  resultCache: ResultCache;
}

// The worker's code: plain CommonJS evaluated as a string, so the same worker runs under tsx, jest and the
// bundled apps alike (no separate file to ship). PGlite's path comes resolved from the main thread.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { PGlite } = require(workerData.pglitePath);
const { serialize } = require(workerData.pgProtocolPath);
let db;
// A new database is a copy of a fresh one kept in the temporary directory (freshDatabaseCache), made there once:
// PGlite's initdb costs seconds of CPU, a copy well under one; or, when the opener names one, of a migrated one
// (migrated-database.ts), which saves the migrations too. A copy is trusted only when this user made it (a directory of
// ours that no one else may write to); anything that fails leaves the data directory empty for initdb.
// 'none' when there is nothing there yet (so it is made), 'refused' when what is there may not be trusted (so it is
// left alone, and this one database made by initdb: making another aside would fail to take its place anyway).
function freshState(dir) {
  let s;
  try {
    s = fs.lstatSync(dir);
  } catch {
    return 'none';
  }
  return s.isDirectory() && s.uid === process.getuid() && (s.mode & 0o022) === 0 && fs.existsSync(dir + '/PG_VERSION')
    ? 'usable'
    : 'refused';
}
async function fromFresh(dataDir, fresh, migrated) {
  if (!fresh || typeof process.getuid !== 'function') return;
  try {
    // Only into a directory there and empty: anything else is a database already, or PGlite's to make.
    if (fs.readdirSync(dataDir).length > 0) return;
  } catch {
    return;
  }
  try {
    if (migrated && freshState(migrated) === 'usable') {
      fs.cpSync(migrated, dataDir, { recursive: true });
      return;
    }
    if (freshState(fresh) === 'none') {
      // Made aside and renamed into place, so a half-made one is never found; a process that made it first wins.
      const making = fs.mkdtempSync(fresh + '.making-');
      try {
        const initdb = new PGlite(making);
        await initdb.waitReady;
        await initdb.close();
        fs.renameSync(making, fresh);
      } catch {
        fs.rmSync(making, { recursive: true, force: true });
      }
    }
    if (freshState(fresh) === 'usable') fs.cpSync(fresh, dataDir, { recursive: true });
  } catch {
    for (const name of fs.readdirSync(dataDir)) fs.rmSync(dataDir + '/' + name, { recursive: true, force: true });
  }
}
// A statement whose parameters are all plain values (text, numbers, booleans, nulls) goes to the engine as one message
// of the extended protocol (parse, bind, describe, execute, sync), its parameters as text for the server to read by
// the types it infers, as node-postgres sends them to a Postgres server: one pass through the engine instead of the six
// PGlite's query() makes (it asks the parameters' types first, then sends each step alone), about 2.4 times cheaper
// for a one-row insert. Dates and arrays of such values go so too, as text written the way query() writes them (a date
// by toISOString(), an array as Postgres' array literal, every element quoted): the outbox's lease and an audit event's
// time are dates, a read by ids an array, in most writes. Others (objects, buffers, arrays holding them, an invalid
// date), and any statement with options (knex gives none: an empty object), keep query(), which serializes parameters
// by their types.
const scalar = (v) => v === null || v === undefined || ['string', 'number', 'boolean', 'bigint'].includes(typeof v);
const plainArray = (a) => Array.isArray(a) && a.every((e) => scalar(e) || plainArray(e));
const plain = (v) => scalar(v) || (v instanceof Date && !Number.isNaN(v.getTime())) || plainArray(v);
const arrayLiteral = (a) =>
  '{' +
  a.map((e) => (e === null || e === undefined ? 'NULL' : Array.isArray(e) ? arrayLiteral(e) : '"' + String(e).replace(/[\\\\"]/g, '\\\\$&') + '"')).join(',') +
  '}';
const asText = (v) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : Array.isArray(v) ? arrayLiteral(v) : String(v));
// Statements the engine keeps parsed, by their text: a read or write run again (every statement knex makes for a route
// is the same text each time) is bound to its named statement instead of parsed, analysed and planned again, which
// halves its time in the engine. At most PREPARED_MAX, the least recently run closed first. Which statements are kept,
// and which may change the schema (then every kept one is closed, since a kept plan may no longer fit the tables), the
// request thread tells with each statement (keep, changesSchema), by the rules of kept-statements.ts.
const PREPARED_MAX = workerData.keptStatements;
const prepared = new Map();
let closing = [];
let preparedCount = 0;
function forgetPrepared() {
  closing.push(...prepared.values());
  prepared.clear();
}
async function runPlain(sql, params, keep) {
  const parts = [];
  // A named statement is closed only outside a transaction (an aborted one refuses every message but its end).
  if (closing.length && !db.isInTransaction()) {
    for (const name of closing) parts.push(serialize.close({ type: 'S', name }));
    closing = [];
  }
  let name = prepared.get(sql);
  if (name !== undefined) {
    prepared.delete(sql);
    prepared.set(sql, name); // the most recently run last
  } else {
    name = PREPARED_MAX > 0 && keep ? 'p' + ++preparedCount : '';
    parts.push(serialize.parse({ text: sql, name, types: [] }));
  }
  parts.push(
    serialize.bind({ statement: name, values: params.map(asText) }),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.sync(),
  );
  let messages;
  try {
    ({ messages } = await db.execProtocol(Buffer.concat(parts), { syncToFs: false }));
  } catch (err) {
    if (name) {
      // Parsed or not, the name is not used again: closing a statement that does not exist is no error.
      if (prepared.get(sql) === name) prepared.delete(sql);
      closing.push(name);
    }
    throw err;
  }
  if (name && !prepared.has(sql)) {
    prepared.set(sql, name);
    if (prepared.size > PREPARED_MAX) {
      const [oldest, oldestName] = prepared.entries().next().value;
      prepared.delete(oldest);
      closing.push(oldestName);
    }
  }
  // As PGlite's query() answers: rows by field name, each value read by its type's parser; the rows a write touched.
  let fields = [];
  const rows = [];
  let affectedRows = 0;
  for (const m of messages) {
    if (m.name === 'rowDescription') fields = m.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID }));
    else if (m.name === 'dataRow')
      rows.push(
        Object.fromEntries(
          m.fields.map((v, i) => {
            const parse = db.parsers[fields[i].dataTypeID];
            return [fields[i].name, v === null ? null : parse ? parse(v, fields[i].dataTypeID) : v];
          }),
        ),
      );
    else if (m.name === 'commandComplete') {
      const words = m.text.split(' ');
      affectedRows += words[0] === 'INSERT' ? parseInt(words[2], 10) : ['UPDATE', 'DELETE', 'COPY', 'MERGE'].includes(words[0]) ? parseInt(words[1], 10) : 0;
    }
  }
  return { rows, fields, affectedRows };
}
const ready = (async () => {
  await fromFresh(workerData.dataDir, workerData.freshDatabase, workerData.migratedDatabase);
  db = new PGlite(workerData.dataDir);
  await db.waitReady;
})().then(
  () => parentPort.postMessage({ ready: true }),
  (err) => parentPort.postMessage({ ready: false, error: { message: String(err && err.message || err) } }),
);
// What the sessions sent and is not run yet, in arrival order; the session inside a transaction, if any.
const queue = [];
let owner;
let running = false;
let closed = false;
const errorOf = (err) => {
  // Postgres errors keep their fields (code, constraint, detail...) so callers tell a unique violation apart.
  const error = {};
  for (const key of Object.getOwnPropertyNames(err)) {
    const v = err[key];
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) error[key] = v;
  }
  error.message = err.message;
  return error;
};
async function run(msg) {
  if (closed) {
    // A session knex was still opening or letting go of when the database closed.
    parentPort.postMessage({ id: msg.id, error: { message: 'the embedded database is closed' } });
    return;
  }
  if (msg.close) {
    closed = true;
    await db.close();
    parentPort.postMessage({ id: msg.id, closed: true });
    return;
  }
  if (msg.endSession) {
    // A session knex let go of inside its transaction: roll it back, so the others are not kept waiting.
    if (owner === msg.session) {
      await db.query('rollback').catch(() => undefined);
      owner = undefined;
    }
    parentPort.postMessage({ id: msg.id, result: {} });
    return;
  }
  let reply;
  try {
    const res =
      (msg.options === undefined || Object.keys(msg.options).length === 0) && (msg.params ?? []).every(plain)
        ? await runPlain(msg.sql, msg.params ?? [], msg.keep)
        : await db.query(msg.sql, msg.params, msg.options);
    reply = { id: msg.id, result: { rows: res.rows, fields: res.fields, affectedRows: res.affectedRows } };
  } catch (err) {
    reply = { id: msg.id, error: errorOf(err) };
  }
  if (msg.changesSchema) forgetPrepared();
  owner = !closed && db.isInTransaction() ? msg.session : undefined;
  // Whether the session is inside a transaction now: its reads then bypass the main thread's result cache.
  reply.inTransaction = owner === msg.session;
  parentPort.postMessage(reply);
}
async function pump() {
  if (running) return;
  running = true;
  await ready;
  for (;;) {
    const i = owner === undefined ? 0 : queue.findIndex((m) => m.session === owner);
    if (i < 0 || queue.length === 0) break;
    const [msg] = queue.splice(i, 1);
    await run(msg);
  }
  running = false;
}
parentPort.on('message', (msg) => {
  queue.push(msg);
  pump();
});
`;

type Reply = { id?: number; result?: unknown; error?: Record<string, unknown>; closed?: boolean; inTransaction?: boolean };
type Pending = { resolve(reply: Reply): void; reject(e: unknown): void; onReply?(reply: Reply): void };

/** How many statements the engine keeps parsed (the least recently run closed first), unless told otherwise. */
export const KEPT_STATEMENTS = 256;

export interface PGliteWorkerOptions {
  /** Keeps read answers until the next write (result-cache.ts); off when absent. */
  resultCache?: ResultCacheOptions;
  /** Statements kept parsed, by their text (KEPT_STATEMENTS when absent; 0: each parsed every time it runs). */
  keptStatements?: number;
  /** Where a fresh database is kept to copy into an empty `dataDir` (freshDatabaseCache); none: initdb every time. */
  freshDatabase?: string;
  /**
   * A migrated database to copy into an empty `dataDir` instead of the fresh one, when it is there and this user's
   * (migrated-database.ts); the fresh one otherwise.
   */
  migratedDatabase?: string;
}

/**
 * Where this user's fresh embedded database is kept, made the first time a process creates one: in the temporary
 * directory, by PGlite's version (its initdb's files are that version's) and by user (only a directory this user made is
 * used). About 27 MB. Undefined where users are not told apart (no `getuid`).
 */
export function freshDatabaseCache(): string | undefined {
  if (typeof process.getuid !== 'function') return undefined;
  const pglite = path.dirname(path.dirname(require.resolve('@electric-sql/pglite')));
  const { version } = JSON.parse(fs.readFileSync(path.join(pglite, 'package.json'), 'utf8')) as { version: string };
  return path.join(os.tmpdir(), `platform-pglite-fresh-${version}-${process.getuid()}`);
}

/** Opens PGlite on `dataDir` in a worker thread; `close()` ends the worker. */
export function openPGliteWorker(dataDir: string, options: PGliteWorkerOptions = {}): PGliteWorker {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      dataDir,
      pglitePath: require.resolve('@electric-sql/pglite'),
      pgProtocolPath: require.resolve('pg-protocol'),
      keptStatements: options.keptStatements ?? KEPT_STATEMENTS,
      freshDatabase: options.freshDatabase,
      migratedDatabase: options.migratedDatabase,
    },
  });
  const cache = new ResultCache(options.resultCache ?? { entries: 0, maxAnswerSize: 0 });
  const pending = new Map<number, Pending>();
  let next = 1;
  let sessions = 0;
  let failed: Error | undefined;
  const waitReady = new Promise<void>((resolve, reject) => {
    worker.once('message', (msg: { ready: boolean; error?: { message: string } }) =>
      msg.ready ? resolve() : reject(new Error(`the embedded database did not open: ${msg.error?.message}`)),
    );
  });
  worker.on('message', (msg: Reply) => {
    if (msg.id === undefined) return;
    const p = pending.get(msg.id);
    pending.delete(msg.id);
    // Synchronously, in the order the worker answered: the cache forgets what it read before a write before
    // anyone hears of the write, and no later answer is handled first.
    p?.onReply?.(msg);
    p?.resolve(msg);
  });
  worker.on('error', (err) => {
    failed = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  });
  const send = (msg: Record<string, unknown>, onReply?: (reply: Reply) => void) =>
    new Promise<Reply>((resolve, reject) => {
      if (failed) return reject(failed);
      const id = next++;
      pending.set(id, { resolve, reject, onReply });
      worker.postMessage({ ...msg, id });
    });
  const answerOf = (reply: Reply) => {
    if (reply.error) throw Object.assign(new Error(String(reply.error.message)), reply.error);
    return reply.result;
  };
  return {
    waitReady,
    resultCache: cache,
    session() {
      const session = ++sessions;
      const cached = cache.session();
      return {
        waitReady,
        async query(sql, params, queryOptions) {
          const key = cached.keyOf(sql, params, queryOptions);
          const kept = key === undefined ? undefined : cache.get(key);
          if (kept) return kept;
          const sentAt = cache.current;
          // Parsers and serializers are functions, which cannot cross threads; knex passes none.
          // Which statements the engine keeps parsed, and which make it forget them, is told here (kept-statements.ts).
          const keeping = { keep: isKept(sql), changesSchema: !keepsSchema(sql) };
          const message = { session, sql, params, options: queryOptions && cloneable(queryOptions), ...keeping };
          const reply = await send(message, (r) => {
            cached.answered(sql, key, sentAt, r.error ? undefined : (r.result as QueryAnswer), r.inTransaction === true);
          });
          return answerOf(reply);
        },
        close: async () => {
          if (!failed) await send({ session, endSession: true });
        },
      };
    },
    async close() {
      // PGlite writes each statement through to its files, so a close that fails (its directory removed under
      // it, as tests do) has nothing left to save: the worker ends either way, as knex's own pool teardown did.
      if (!failed) await send({ close: true }).catch(() => undefined);
      await worker.terminate();
    },
  };
}

const cloneable = (options: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(options).filter(([, v]) => typeof v !== 'function'));
