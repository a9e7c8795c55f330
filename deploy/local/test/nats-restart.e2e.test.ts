// NATS restarted under writers (docs/operations.md, "NATS lost or restarted"; docs/decisions.md, D45 as amended): the
// whole platform on Postgres and a NATS server of this test's own, which is killed and started again, twice, while
// writers create and revoke tokens and edit organizations. Every write answers what it did (no 5xx for a change that
// was made), each answer is the truth on the very next request (a revoked token is refused, an edit is read back),
// and writes are not held up: the 99th percentile of the writes from the first kill on, while NATS is away and in the
// first 3 s after each restart stays within WRITE_P99_MS.
//
// Before, a notice's retry asked JetStream while NATS was away whether the notice stream was there; the client
// dropped that question with its buffer on reconnecting, and every notice after it waited out its 5 s timeout (twice
// when the stream had to be made again): for seconds after NATS came back writes waited (up to the gateway's 10 s
// deadline, then 504 although committed), and the gateway, back first, served edits as they were before them.
import { startPrivateNats, type PrivateNats } from '@platform/testing';
import { basic, bootTestPlatform, type Reply, type TestPlatform } from './harness';

/**
 * The bound on the 99th percentile of write latency around the restart: a writer waits for its notice at most 2 s
 * (NOTICE_WAIT_MS in libs/bus/src/outage.ts), plus a write's own time on a loaded machine; and, in the first seconds
 * after NATS is back, a question to the JetStream API that may wait out its 5 s timeout (seen since processes heartbeat
 * on the notice stream: 5.5 s in 2 of 3 runs beside other work). Still far below the gateway's 10 s deadline, which
 * writes used to reach.
 */
const WRITE_P99_MS = 6_500;
const WARM_MS = 2_000;
/** How long NATS is away each time: a short outage, and one longer than the JetStream API's 5 s timeout. */
const AWAY_MS = [3_000, 6_000];
const AFTER_MS = 6_000;
/** The first moments after NATS came back, where writes used to wait. */
const BACK_WINDOW_MS = 3_000;

interface Sample {
  /** Started this long after the kill (negative: before). */
  at: number;
  ms: number;
  what: string;
  status: number;
  write: boolean;
  message?: string;
}

describe('NATS restarted under writers (Postgres + NATS)', () => {
  let nats: PrivateNats;
  let t: TestPlatform;
  beforeAll(async () => {
    nats = await startPrivateNats();
    t = await bootTestPlatform({ NATS_URL: nats.url });
    await t.signUp('alice');
    for (const org of ['acme-1', 'acme-2']) expect((await t.api('alice', 'POST', '/orgs', { username: org })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await nats?.dispose();
  }, 60_000);

  it('answers every committed write with its success, the truth on the next request, and no write waits for NATS', async () => {
    const samples: Sample[] = [];
    /** Answers that were not the truth on the very next request. */
    const untrue: string[] = [];
    let killedAt = Date.now() + 3_600_000;
    let stop = false;
    const timed = async (what: string, write: boolean, call: () => Promise<Reply>): Promise<Reply> => {
      const began = Date.now();
      const res = await call().catch((err: unknown) => ({ status: 0, body: { message: String(err) } }) as Reply);
      const message = res.status >= 500 || res.status === 0 ? JSON.stringify(res.body) : undefined;
      samples.push({ at: began - killedAt, ms: Date.now() - began, what, status: res.status, write, message });
      return res;
    };
    const password = { authorization: basic('alice', 'alice-password') };
    const me = (token: string) => t.send(undefined, 'GET', '/user', undefined, { authorization: `token ${token}` });

    // Creates a token, uses it (the gateway keeps who it is), revokes it, and uses it again: refused at once.
    const tokens = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const made = await timed('create token', true, () =>
          t.api(undefined, 'POST', '/users/alice/tokens', { name: `w${n}-${i}` }, password),
        );
        if (made.status !== 201) continue;
        for (let use = 0; use < 2; use++) {
          const used = await timed('use token', false, () => me(made.body.sha1));
          if (used.status !== 200) untrue.push(`token ${made.body.id} made (201) but refused (${used.status})`);
        }
        const revoked = await timed('delete token', true, () =>
          t.api(undefined, 'DELETE', `/users/alice/tokens/${made.body.id}`, undefined, password),
        );
        if (revoked.status !== 204) continue;
        const after = await timed('use token', false, () => me(made.body.sha1));
        if (after.status !== 401) untrue.push(`token ${made.body.id} deleted (204) but still answered ${after.status}`);
      }
    };
    // Edits an organization, and reads the edit back.
    const edits = async (org: string) => {
      for (let i = 0; !stop; i++) {
        const description = `edit ${i}`;
        const edited = await timed('edit organization', true, () => t.api('alice', 'PATCH', `/orgs/${org}`, { description }));
        if (edited.status !== 200) continue;
        const read = await timed('read organization', false, () => t.api('alice', 'GET', `/orgs/${org}`));
        if (read.status !== 200 || read.body.description !== description)
          untrue.push(`${org} edited to "${description}" (200) but read as ${read.status} "${read.body?.description}"`);
      }
    };

    const writers = [tokens(1), tokens(2), edits('acme-1'), edits('acme-2')];
    await new Promise((r) => setTimeout(r, WARM_MS));
    killedAt = Date.now();
    for (const s of samples) s.at = -1;
    /** When NATS came back each time, after the first kill. */
    const back: number[] = [];
    for (const away of AWAY_MS) {
      await nats.kill();
      await new Promise((r) => setTimeout(r, away));
      await nats.start();
      back.push(Date.now() - killedAt);
      await new Promise((r) => setTimeout(r, AFTER_MS));
    }
    stop = true;
    await Promise.all(writers);

    const failed = samples.filter((s) => s.status >= 500 || s.status === 0);
    expect(failed).toEqual([]);
    expect(untrue).toEqual([]);
    const writes = samples.filter((s) => s.write && s.at >= 0);
    /** The 99th percentile of these writes' latency, and those over the bound when they are more than 1 in 100. */
    const p99Of = (these: Sample[]) => {
      const ms = these.map((s) => s.ms).sort((a, b) => a - b);
      const p99 = ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)];
      const slow = these.filter((s) => s.ms > WRITE_P99_MS).map((s) => `${s.what} at ${s.at} ms: ${s.ms} ms`);
      return { writes: these.length, p99, slow: p99 > WRITE_P99_MS ? slow : [] };
    };
    // From the first kill on, and in the first seconds after each restart (where writes used to wait for NATS); writes
    // went on through each outage and after it.
    const windows = [
      { window: 'from the first kill', ...p99Of(writes) },
      ...back.map((at, i) => ({
        window: `restart ${i + 1}: while away`,
        ...p99Of(writes.filter((s) => s.at >= at - AWAY_MS[i] && s.at < at)),
      })),
      ...back.map((at, i) => ({
        window: `restart ${i + 1}: ${BACK_WINDOW_MS} ms after`,
        ...p99Of(writes.filter((s) => s.at >= at && s.at < at + BACK_WINDOW_MS)),
      })),
    ];
    if (process.env.NATS_RESTART_REPORT) console.log(JSON.stringify(windows.map(({ slow: _, ...w }) => w)));
    expect(windows.filter((w) => w.writes === 0 || w.slow.length > 0)).toEqual([]);
  }, 90_000);
});
