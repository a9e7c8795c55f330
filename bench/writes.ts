/**
 * The write rows of `npm run bench -- http` (docs/benchmarks.md, "Writes"): what each write is called with, the bare
 * handlers they are compared with, and what they need made before they are measured (not timed).
 *
 * - An organization, a team, a team member and an organization's PATCH against a bare Express handler doing one
 *   `INSERT ... RETURNING` on the same Postgres server (a database of its own), in both topologies.
 * - A token create and a token delete behind HTTP Basic against a bare Express handler doing the same scrypt as
 *   the platform's password hashing (apps/orgs-teams/src/identity/passwords.ts).
 * - The teams list of an untouched organization against itself: measured alone, then while another organization
 *   takes a steady WRITES_BESIDE team creates a second.
 */
import { availableParallelism } from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import type { Call } from './http';
import { backendPids, dropDatabase, freshDatabase, startBareCode, type Bare } from './support';

/** In every write row's label: `npm run bench -- http embedded,separate writes` runs them alone. */
export const WRITES_TAG = '[writes]';

/** Connections of the write rows' load: a handful of clients writing at once, not a read's 32. */
const WRITE_CONNECTIONS = 8;
/** Team creates a second in another organization beside the reads-under-writes row. */
const WRITES_BESIDE = 20;
/** Users and teams made up front for the member row: each add names a new pair, USERS × TEAMS of them. */
const MEMBER_USERS = 30;
const MEMBER_TEAMS = 30;
/** Tokens made up front for the delete row, beside those the create row makes (a delete is about as quick as a create). */
const TOKEN_POOL = 500;
/** The same scrypt as the platform's password hashing: N=2^15, r=8, p=1, a 32-byte key. */
const SCRYPT = { N: 1 << 15, r: 8, p: 1, keyLength: 32 };

export const WRITE_ROWS = {
  org: `POST /api/v1/orgs ${WRITES_TAG}`,
  team: `POST /api/v1/orgs/:orgname/teams ${WRITES_TAG}`,
  member: `PUT /api/v1/teams/:teamid/members/:username ${WRITES_TAG}`,
  patch: `PATCH /api/v1/orgs/:orgname ${WRITES_TAG}`,
  tokenCreate: `POST /api/v1/users/:username/tokens ${WRITES_TAG}`,
  tokenDelete: `DELETE /api/v1/users/:username/tokens/:id ${WRITES_TAG}`,
  readsUnderWrites: `GET /api/v1/orgs/:orgname/teams, ${WRITES_BESIDE} writes/s in another organization ${WRITES_TAG}`,
};

/** Share of the row's baseline each write row should reach, in both topologies (the token delete has none). */
export const WRITE_TARGETS: Record<string, number> = {
  [WRITE_ROWS.org]: 0.12,
  [WRITE_ROWS.team]: 0.15,
  [WRITE_ROWS.member]: 0.15,
  [WRITE_ROWS.patch]: 0.3,
  [WRITE_ROWS.tokenCreate]: 0.9,
  [WRITE_ROWS.readsUnderWrites]: 0.8,
};

/** The bare handlers of the write rows. */
export type WriteBares = Record<'insert' | 'scrypt', Bare>;

/**
 * The bare write handlers: one `INSERT ... RETURNING` of a new row on a database of its own on the same Postgres
 * server (its backends charged to its CPU), and the platform's scrypt on as many threads as the platform's password
 * threads (one per core). Both parse the JSON body and answer 201 with JSON, as the platform does.
 */
export async function startWriteBares(server: string): Promise<WriteBares & { stop(): Promise<void> }> {
  const name = `bench_bare_${process.pid}`;
  const url = await freshDatabase(name, server);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query(
    "create table bare_writes (id bigserial primary key, name text not null unique, description text not null default '', created_at timestamptz not null default now())",
  );
  await db.end();
  const insert = await startBareCode(
    `const express = require('express');
    const pool = new (require('pg').Pool)({ connectionString: process.env.BARE_DATABASE_URL, max: ${WRITE_CONNECTIONS} });
    let seq = 0;
    const e = express();
    e.use(express.json());
    e.all('*splat', async (_q, r) => {
      const { rows } = await pool.query('insert into bare_writes (name) values ($1) returning *', [process.pid + '-' + seq++]);
      r.status(201).json(rows[0]);
    });
    e.listen(PORT, '127.0.0.1');`,
    { BARE_DATABASE_URL: url },
  );
  const scrypt = await startBareCode(
    `const express = require('express');
    const crypto = require('node:crypto');
    const e = express();
    e.use(express.json());
    e.all('*splat', (_q, r, next) =>
      crypto.scrypt('bench-password', crypto.randomBytes(16), ${SCRYPT.keyLength}, { N: ${SCRYPT.N}, r: ${SCRYPT.r}, p: ${SCRYPT.p}, maxmem: ${128 * SCRYPT.N * SCRYPT.r * 2} },
        (err, key) => (err ? next(err) : r.status(201).json({ id: 1, sha1: key.toString('hex') }))));
    e.listen(PORT, '127.0.0.1');`,
    { UV_THREADPOOL_SIZE: String(availableParallelism()) },
  );
  return {
    insert: { ...insert, pids: async () => [insert.pid, ...(await backendPids(name, server))] },
    scrypt,
    async stop() {
      insert.stop();
      scrypt.stop();
      await dropDatabase(name, server);
    },
  };
}

/** Who the write rows act as, and the teams list they read beside writes. */
export interface WriteCallers {
  base: string;
  owner: string;
  ownerToken: string;
  ownerBasic: string;
  rootToken: string;
  /** The teams list of the demo organization as its row calls it (no write touches that organization meanwhile). */
  teamsList: Call;
}

/** A client of the platform's API that throws on an unexpected answer. */
async function call(base: string, method: string, p: string, body: unknown, auth: string): Promise<any> {
  const res = await fetch(`${base}/api/v1${p}`, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

/** Runs `task` for 0..n-1, `atOnce` at a time. */
async function inParallel(n: number, atOnce: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (i < n) await task(i++);
    }),
  );
}

/**
 * The write rows `wanted` keeps, with what they need made first: an organization of their own (the writes never
 * touch the demo organization, whose teams list the reads-under-writes row reads), users and teams for the member
 * row, tokens for the delete row. Names are unique per request.
 */
export async function writeCalls(callers: WriteCallers, wanted: (label: string) => boolean): Promise<Call[]> {
  const { base, owner, ownerToken, ownerBasic, rootToken } = callers;
  if (!Object.values(WRITE_ROWS).some(wanted)) return [];
  let seq = 0;
  const unique = () => `${Date.now().toString(36)}-${seq++}`;
  const json = { 'content-type': 'application/json' };
  const asOwner = { authorization: `token ${ownerToken}`, ...json };
  const org = `bench-writes-${unique()}`;
  await call(base, 'POST', '/orgs', { username: org }, asOwner.authorization);
  const write = (label: string, against: Call['against'], c: Omit<Call, 'label' | 'as' | 'url' | 'body' | 'against'>): Call => {
    const first = c.next!();
    return { label, as: 'owner', against, connections: WRITE_CONNECTIONS, url: first.url, body: first.body, ...c };
  };
  const calls: Call[] = [];
  if (wanted(WRITE_ROWS.org))
    calls.push(
      write(WRITE_ROWS.org, 'insert', {
        method: 'POST',
        headers: asOwner,
        next: () => ({ url: '/api/v1/orgs', body: JSON.stringify({ username: `bo-${unique()}` }) }),
      }),
    );
  const teamCreate = () => ({ url: `/api/v1/orgs/${org}/teams`, body: JSON.stringify({ name: `bt-${unique()}`, type: 'general' }) });
  if (wanted(WRITE_ROWS.team)) calls.push(write(WRITE_ROWS.team, 'insert', { method: 'POST', headers: asOwner, next: teamCreate }));
  if (wanted(WRITE_ROWS.member)) {
    const users = Array.from({ length: MEMBER_USERS }, (_, i) => `bench-m-${unique()}-${i}`);
    await inParallel(users.length, 4, (i) =>
      call(
        base,
        'POST',
        '/admin/users',
        { username: users[i], email: `${users[i]}@example.com`, password: 'bench-member-password', must_change_password: false },
        `token ${rootToken}`,
      ),
    );
    const teams: number[] = [];
    for (let i = 0; i < MEMBER_TEAMS; i++)
      teams.push((await call(base, 'POST', `/orgs/${org}/teams`, { name: `bm-${i}`, type: 'general' }, asOwner.authorization)).id);
    let pair = 0;
    calls.push(
      write(WRITE_ROWS.member, 'insert', {
        method: 'PUT',
        headers: { authorization: asOwner.authorization },
        // Each team once before the calls are counted: loaded, the row comes back to a team within a fraction of a second.
        warmCalls: MEMBER_TEAMS,
        // Every team gets every user before a pair repeats (a repeated add would change nothing).
        next: () => {
          const n = pair++;
          return { url: `/api/v1/teams/${teams[n % teams.length]}/members/${users[Math.floor(n / teams.length) % users.length]}` };
        },
      }),
    );
  }
  if (wanted(WRITE_ROWS.patch))
    calls.push(
      write(WRITE_ROWS.patch, 'insert', {
        method: 'PATCH',
        headers: asOwner,
        next: () => ({ url: `/api/v1/orgs/${org}`, body: JSON.stringify({ description: `bench ${unique()}` }) }),
      }),
    );
  // Tokens the delete row spends: made up front, and every one the create row makes.
  const tokens: number[] = [];
  const asBasic = { authorization: ownerBasic, ...json };
  const tokenCreate = () => ({ url: `/api/v1/users/${owner}/tokens`, body: JSON.stringify({ name: `bk-${unique()}` }) });
  if (wanted(WRITE_ROWS.tokenCreate))
    calls.push(
      write(WRITE_ROWS.tokenCreate, 'scrypt', {
        method: 'POST',
        headers: asBasic,
        next: tokenCreate,
        onAnswer: (status, body) => {
          if (status === 201) tokens.push((JSON.parse(body) as { id: number }).id);
        },
      }),
    );
  if (wanted(WRITE_ROWS.tokenDelete)) {
    await inParallel(TOKEN_POOL, 8, async () =>
      tokens.push((await call(base, 'POST', `/users/${owner}/tokens`, { name: `bk-${unique()}` }, ownerBasic)).id),
    );
    // Once the pool is spent a delete names no token (404), counted as an error, never as a served delete.
    calls.push(
      write(WRITE_ROWS.tokenDelete, 'scrypt', {
        method: 'DELETE',
        headers: { authorization: ownerBasic },
        next: () => ({ url: `/api/v1/users/${owner}/tokens/${tokens.pop() ?? 0}` }),
      }),
    );
  }
  if (wanted(WRITE_ROWS.readsUnderWrites))
    calls.push({
      ...callers.teamsList,
      label: WRITE_ROWS.readsUnderWrites,
      against: 'alone',
      beside: async (durationS) => {
        const result = await autocannon({
          url: `${base}/api/v1/orgs/${org}/teams`,
          method: 'POST',
          headers: asOwner,
          // One a second on each connection: the rate holds while a write takes up to a second.
          connections: WRITES_BESIDE,
          overallRate: WRITES_BESIDE,
          duration: durationS,
          requests: [
            {
              setupRequest: (req) => {
                const t = teamCreate();
                return { ...req, path: t.url, body: t.body };
              },
            },
          ],
        });
        return result['2xx'] / result.duration;
      },
    });
  return calls;
}
