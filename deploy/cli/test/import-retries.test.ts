import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { importOrgs } from '../src/import-command';
import { EXIT, type CliError } from '../src/io';

// `cli import` sends a batch again when the platform is unreachable, busy (429) or failing (5xx), saying so each time,
// and gives up after its tries with the platform's last answer; a refusal of the token or the batch is final at once.
// A stand-in platform on loopback answers as each test scripts it. The waits between tries run on fake timers: only
// setTimeout is faked (the wait's timer), so the stand-in and fetch work as they do, and each wait ends as soon as it
// is set instead of after its half second, second, two and four.

/** Every clock but setTimeout's stays real. */
const NOT_FAKED = [
  'Date',
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
] as const;

describe('cli import: a batch sent again', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-retries-'));
  const file = path.join(dir, 'orgs.json');
  fs.writeFileSync(file, JSON.stringify({ organizations: [{ name: 'acme', owners: ['olivia'] }] }));
  let statuses: number[] = [];
  let asked = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = statuses[asked++] ?? 200;
      const body =
        status === 200
          ? { results: [{ name: 'acme', outcome: 'created', id: 10, created: {}, existing: {}, errors: [] }] }
          : { message: `answer ${status}` };
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  let io: { env: NodeJS.ProcessEnv; out(t: string): void; err(t: string): void; readStdin(): Promise<string> };
  let err = '';

  afterEach(() => jest.useRealTimers());
  beforeAll(() => new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r())));
  afterAll(() => {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  /** Runs the command to its end, ending each wait between tries as soon as it is set. */
  async function settled<T>(run: Promise<T>): Promise<T> {
    let done = false;
    const outcome = run.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    void outcome.then(() => (done = true));
    while (!done) {
      // The stand-in's answer and fetch's reading of it run on real I/O: let them, then end whatever wait is set.
      await new Promise((r) => setImmediate(r));
      jest.advanceTimersToNextTimer();
    }
    const end = await outcome;
    if ('error' in end) throw end.error;
    return end.value;
  }

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: [...NOT_FAKED] });
    asked = 0;
    err = '';
    fs.rmSync(`${file}.import-state`, { force: true });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    io = { env: { PLATFORM_TOKEN: 'admin-token', PLATFORM_URL: url }, out: () => {}, err: (t) => (err += t), readStdin: async () => '' };
  });

  it('sends it again after 503 and 429, saying why, until the platform takes it', async () => {
    statuses = [503, 429];
    expect(await settled(importOrgs(file, {}, io))).toBe(EXIT.ok);
    expect(asked).toBe(3);
    expect(err).toContain('batch 1: 503 answer 503; sending it again');
    expect(err).toContain('batch 1: 429 answer 429; sending it again');
  });

  it('gives up after five tries with the last answer, having said "again" only for the tries that followed', async () => {
    statuses = [500, 500, 500, 500, 502];
    await expect(settled(importOrgs(file, {}, io))).rejects.toMatchObject({
      message: 'the platform refused a batch (502): answer 502',
      exitCode: EXIT.unavailable,
    } satisfies Partial<CliError>);
    expect(asked).toBe(5);
    expect(err.match(/sending it again/g)).toHaveLength(4);
  });

  it('does not send a batch again that the platform refused, nor with a token it refused', async () => {
    statuses = [422];
    await expect(settled(importOrgs(file, {}, io))).rejects.toMatchObject({ message: 'the platform refused a batch (422): answer 422' });
    expect(asked).toBe(1);
    asked = 0;
    statuses = [403];
    await expect(settled(importOrgs(file, {}, io))).rejects.toMatchObject({ message: 'the platform refused the token (403): answer 403' });
    expect(asked).toBe(1);
  });
});
