import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createUser } from 'nkeys.js';
import { fetchResourceHistory, type AccountLookup } from '@platform/agent-protocol';
import { InProcessBus } from '@platform/bus';
import { agentV1 } from '@platform/proto';
import { HubTakenError, simulate, type SimulateOptions } from '../src';

/**
 * simulate() against a stand-in of the platform's REST routes (tokens, user, orgs, enrollment) and an in-process
 * bus that records what arrives and "applies" inventory reports as the clusters service would. Few messages:
 * under Jest every seal costs tens of milliseconds.
 */
interface Hub {
  name: string;
  uid: string;
  nodeCount: number;
  kubernetesVersion: string;
}

function fakePlatform() {
  const orgs = new Set<string>();
  const hubs = new Map<string, Hub[]>();
  let nextAccount = 1;
  const enrolled: string[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : undefined;
      const answer = (status: number, json?: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(json === undefined ? '' : JSON.stringify(json));
      };
      const url = req.url!;
      let m: RegExpExecArray | null;
      if (req.method === 'POST' && /^\/api\/v1\/users\/owner\/tokens$/.test(url)) {
        const ok = req.headers.authorization === `Basic ${Buffer.from('owner:owner-password').toString('base64')}`;
        return ok ? answer(201, { id: 5, name: body.name, sha1: 'token-1' }) : answer(401, { message: 'bad credentials' });
      }
      if (req.method === 'DELETE' && url.startsWith('/api/v1/users/owner/tokens/')) return answer(204);
      if (req.headers.authorization !== 'token token-1') return answer(401, { message: 'no token' });
      if (req.method === 'GET' && url === '/api/v1/user') return answer(200, { id: 42, login: 'owner' });
      if (req.method === 'POST' && url === '/api/v1/orgs') {
        orgs.add(body.username);
        hubs.set(body.username, []);
        return answer(201, { id: 7, username: body.username });
      }
      if ((m = /^\/api\/v1\/orgs\/([^/]+)$/.exec(url)))
        return orgs.has(m[1]) ? answer(200, { id: 7, username: m[1] }) : answer(404, { message: 'no org' });
      if ((m = /^\/api\/v1\/orgs\/([^/]+)\/clusters$/.exec(url))) {
        const list = hubs.get(m[1])!;
        if (req.method === 'GET') return answer(200, list);
        if (list.some((h) => h.name === body.name)) return answer(409, { message: 'name taken' });
        const key = createUser();
        list.push({ name: body.name, uid: body.uid, nodeCount: 0, kubernetesVersion: '' });
        enrolled.push(body.name);
        return answer(201, {
          cluster: { name: body.name, uid: body.uid },
          bus: { accountID: nextAccount++, publicKey: key.getPublicKey(), seed: new TextDecoder().decode(key.getSeed()) },
        });
      }
      answer(404, { message: `no route ${req.method} ${url}` });
    });
  });
  return { server, hubs, enrolled };
}

describe('simulate()', () => {
  let platform: ReturnType<typeof fakePlatform>;
  let url: string;
  let bus: InProcessBus;
  const received: { subject: string; messageId: string; kind: number }[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simulator-'));

  beforeAll(async () => {
    platform = fakePlatform();
    await new Promise<void>((r) => platform.server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(platform.server.address() as AddressInfo).port}`;
    bus = new InProcessBus();
    await bus.consume({ durable: 'recorder', subject: 'agent.>' }, async (subject, payload) => {
      const env = agentV1.Envelope.decode(Buffer.from(payload as string, 'base64'));
      received.push({ subject, messageId: env.messageId, kind: env.kind });
      if (env.kind === agentV1.Kind.KIND_INVENTORY) {
        const report = agentV1.InventoryReport.decode(env.payload);
        for (const list of platform.hubs.values())
          for (const hub of list)
            if (hub.uid === report.hub!.uid)
              Object.assign(hub, { nodeCount: report.hub!.nodeCount, kubernetesVersion: report.hub!.kubernetesVersion });
      }
    });
  });
  afterAll(async () => {
    await bus.close();
    await new Promise((r) => platform.server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const opts = (over: Partial<SimulateOptions> = {}): SimulateOptions => ({
    api: { url, username: 'owner', password: 'owner-password' },
    org: 'acme',
    hubs: 1,
    spokes: 1,
    months: 1,
    sampleHours: 24 * 7,
    seed: 3,
    bus,
    now: Date.UTC(2026, 5, 15),
    state: path.join(dir, 'state.json'),
    ...over,
  });
  const drained = async (n: number) => {
    for (let i = 0; i < 200 && received.length < n; i++) await new Promise((r) => setTimeout(r, 20));
  };

  it('enrolls, keeps the seed in a 0600 state file, sends every kind, answers resource history, and a re-run resends the same ids', async () => {
    const first = await simulate(opts());
    try {
      const { result } = first;
      expect(platform.enrolled).toEqual([result.hubs[0].name]);
      expect(fs.statSync(opts().state!).mode & 0o777).toBe(0o600);
      const state = JSON.parse(fs.readFileSync(opts().state!, 'utf8'));
      expect(state.orgs.acme.hubs[result.hubs[0].name]).toEqual(
        expect.objectContaining({ uid: result.hubs[0].uid, seed: expect.stringMatching(/^SU/) }),
      );
      const sent = Object.values(result.published).reduce((a, b) => a + b, 0);
      await drained(sent);
      expect(received).toHaveLength(sent);
      expect(new Set(received.map((r) => r.kind))).toEqual(new Set([1, 2, 3, 4]));
      // The reports name the organization (account 7) as their user, as the platform attributes them.
      expect(result.usage).toEqual(
        expect.objectContaining({ uid: 7, cid: result.hubs[0].uid, product: 'productdb', eventVersion: 1, year: '2026', month: '05' }),
      );

      // The hub answers its resource history, sealed with its key.
      const accounts: AccountLookup = { accountOf: async (busPubKey) => ({ busPubKey, revoked: false }), mayReportFor: async () => true };
      const reply = await fetchResourceHistory(
        bus,
        { clusterUID: result.usage.cid, userId: result.usage.uid, licenseId: result.usage.lid, product: 'productdb' },
        { accounts },
      );
      expect(reply.items.map((i) => i.key)).toEqual([result.usage.eventKey]);
      expect(reply.items[0].values[0].version).toBe(1);
    } finally {
      await first.stop();
    }

    // Again with the state file: the hub is reused (not enrolled again) and the very same message ids are sent.
    const before = received.map((r) => r.messageId);
    received.length = 0;
    const second = await simulate(opts({ now: undefined }));
    await second.stop();
    await drained(before.length);
    expect(second.result.hubs[0].reused).toBe(true);
    expect(platform.enrolled).toHaveLength(1);
    expect(received.map((r) => r.messageId)).toEqual(before);
  }, 60_000);

  it('fails with a clear message when the hub is enrolled but the state file is not given', async () => {
    await expect(simulate(opts({ state: undefined }))).rejects.toThrow(HubTakenError);
    await expect(simulate(opts({ state: path.join(dir, 'other.json') }))).rejects.toThrow(
      /pass the state file .*--state.*or use another --org or --seed/i,
    );
  });

  it('refuses a wrong password with the route it called', async () => {
    await expect(simulate(opts({ api: { url, username: 'owner', password: 'nope' } }))).rejects.toThrow(/wrong username or password/);
  });
});
