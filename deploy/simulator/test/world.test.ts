import { createUser } from 'nkeys.js';
import { seal } from '@platform/agent-protocol';
import type { agentV1 } from '@platform/proto';
import { buildWorld, countMessages, messagesOf, type WorldOptions } from '../src';

/** What the simulator generates: a pure function of the seed and options (no platform, no bus). */
const NOW = Date.UTC(2026, 10, 20, 13, 37);
const options = (over: Partial<WorldOptions> = {}): WorldOptions => ({
  org: 'acme',
  hubs: 2,
  spokes: 3,
  months: 3,
  seed: 7,
  sampleHours: 6,
  userIds: [11, 12],
  nowMs: NOW,
  ...over,
});
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const clusterUids = (o: WorldOptions) => buildWorld(o).hubs.flatMap((h) => [h.state.uid, ...h.spokes.map((s) => s.state.uid)]);
const names = (o: WorldOptions) => buildWorld(o).hubs.flatMap((h) => [h.state.name, ...h.spokes.map((s) => s.state.name)]);
const ids = (o: WorldOptions) => [...messagesOf(buildWorld(o))].map((m) => m.messageId);

describe('the simulated world', () => {
  it('is the same for the same seed: names, UIDs, message ids and payloads', () => {
    expect(buildWorld(options())).toEqual(buildWorld(options()));
    expect(ids(options())).toEqual(ids(options()));
    expect([...messagesOf(buildWorld(options()))]).toEqual([...messagesOf(buildWorld(options()))]);
    // `now` within the same sample interval gives the same period, so the same reports.
    expect(ids(options({ nowMs: NOW + 60_000 }))).toEqual(ids(options()));
  });

  it('differs for another seed, and its UIDs differ for another organization', () => {
    const other = options({ seed: 8 });
    const uids = new Set(clusterUids(options()));
    const messageIds = new Set(ids(options()));
    expect(clusterUids(other).filter((u) => uids.has(u))).toEqual([]);
    expect(ids(other).filter((id) => messageIds.has(id))).toEqual([]);
    expect(names(other)).not.toEqual(names(options()));
    expect(clusterUids(options({ org: 'globex' })).filter((u) => uids.has(u))).toEqual([]);
  });

  it('seals to the same bytes for the same seed and key (message ids and sent-at times are derived)', () => {
    const key = createUser().getSeed();
    const [a, b] = [buildWorld(options()), buildWorld(options())].map((w) => [...messagesOf(w)].slice(0, 2));
    for (let i = 0; i < 2; i++) {
      const sealed = (m: (typeof a)[number]) =>
        Buffer.from(seal(m.kind, m.payload as never, key, { messageId: m.messageId, sentAt: m.sentAtMs }));
      expect(sealed(a[i])).toEqual(sealed(b[i]));
    }
  });

  it('has realistic, unique names and lower-case UUIDs; message ids never repeat', () => {
    const world = buildWorld(options());
    for (const hub of world.hubs) {
      const all = [hub, ...hub.spokes];
      expect(new Set(all.map((c) => c.state.name)).size).toBe(all.length);
      for (const c of all) {
        expect(c.state.name).toMatch(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
        expect(c.state.uid).toMatch(UUID);
        expect(['aws', 'gcp', 'azure', 'bare-metal', 'gks']).toContain(c.state.provider);
        expect(c.state.kubernetesVersion).toMatch(/^v1\.\d+\.\d+$/);
        expect(c.state.namespaces.map((n) => n.name)).toEqual(expect.arrayContaining(['kube-system', 'default', 'demo', 'billing']));
        expect(c.state.features.length).toBeGreaterThan(1);
      }
    }
    expect(world.hubs[0].state.name).toMatch(/^prod-/);
    const all = ids(options());
    expect(new Set(all).size).toBe(all.length);
    for (const id of all) expect(id).toMatch(UUID);
  });

  it('sends every product, and a few thousand reports by default', () => {
    const messages = [...messagesOf(buildWorld(options({ hubs: 1, nowMs: NOW })))];
    const products = new Set(messages.filter((m) => m.kind === 'usage-sample').map((m) => (m.payload as agentV1.UsageSample).product));
    expect([...products].sort()).toEqual(['productbackup', 'productdb', 'productingress', 'productvault']);
    const counts = countMessages(buildWorld(options({ hubs: 1 })));
    expect(counts.inventory).toBe(1);
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(1_000);
    expect(total).toBeLessThan(10_000);
  });

  it('hosts a cluster of every hub with spokes on gks (the gks usage view), whatever the seed', () => {
    for (const seed of [1, 2, 3, 7]) {
      const world = buildWorld(options({ seed }));
      for (const hub of world.hubs) expect([hub, ...hub.spokes].filter((c) => c.hosting === 'gks').length).toBeGreaterThan(0);
    }
    // No spokes: the hub keeps the provider it drew.
    expect(buildWorld(options({ spokes: 0 })).hubs.map((h) => h.state.provider)).toEqual(
      buildWorld(options()).hubs.map((h) => h.state.provider),
    );
  });

  it('gives each object back-to-back samples that end after they start and never overlap, within the period', () => {
    const world = buildWorld(options({ sampleHours: 5 }));
    const byObject = new Map<string, agentV1.UsageSample[]>();
    for (const m of messagesOf(world)) {
      if (m.kind !== 'usage-sample') continue;
      const s = m.payload as agentV1.UsageSample;
      byObject.set(`${s.clusterUid}/${s.objectUid}`, [...(byObject.get(`${s.clusterUid}/${s.objectUid}`) ?? []), s]);
    }
    expect(byObject.size).toBe(2 * 2 * 4);
    for (const samples of byObject.values()) {
      expect(samples.length).toBeGreaterThan(10);
      const sorted = [...samples].sort((a, b) => a.startMs - b.startMs);
      for (const [i, s] of sorted.entries()) {
        expect(s.endMs).toBeGreaterThan(s.startMs);
        expect(s.startMs).toBeGreaterThanOrEqual(world.startMs);
        expect(s.endMs).toBeLessThanOrEqual(world.endMs);
        if (i > 0) expect(s.startMs).toBeGreaterThanOrEqual(sorted[i - 1].endMs);
        const cpu = s.resources.find((r) => r.resource === 'cpu')!;
        expect(cpu.used).toBeLessThanOrEqual(cpu.request);
      }
    }
  });

  it('numbers each object’s resource events 1..k with increasing timestamps and a resource id naming it', () => {
    const events = [...messagesOf(buildWorld(options()))]
      .filter((m) => m.kind === 'resource-event')
      .map((m) => m.payload as agentV1.ResourceEvent);
    const byKey = new Map<string, agentV1.ResourceEvent[]>();
    for (const e of events) byKey.set(`${e.clusterUid} ${e.key}`, [...(byKey.get(`${e.clusterUid} ${e.key}`) ?? []), e]);
    for (const list of byKey.values()) {
      expect(list.map((e) => e.version)).toEqual(list.map((_, i) => i + 1));
      for (let i = 1; i < list.length; i++) expect(list[i].timestampMs).toBeGreaterThan(list[i - 1].timestampMs);
      const id = JSON.parse(list[0].resourceIdJson);
      expect(id).toEqual(
        expect.objectContaining({
          group: list[0].group,
          namespace: expect.any(String),
          name: expect.any(String),
          kind: expect.any(String),
        }),
      );
      expect(JSON.parse(list[0].partialObjectMetaJson).kind).toBe('PartialObjectMetadata');
    }
  });

  it('gives every object a last change in the last days of the period that leaves its quota as it was', () => {
    const world = buildWorld(options());
    for (const hub of world.hubs)
      for (const o of [hub, ...hub.spokes].flatMap((c) => c.objects)) {
        const [prev, last] = o.quotas.slice(-2);
        // The dashboard's events/ lists the last 14 days at most: each object has an event there.
        expect(world.endMs - last.fromMs).toBeLessThanOrEqual(3 * 86_400_000);
        expect(last.fromMs).toBeGreaterThan(prev.fromMs);
        expect({ ...last, fromMs: 0 }).toEqual({ ...prev, fromMs: 0 });
      }
  });

  it('refuses options out of range', () => {
    expect(() => buildWorld(options({ hubs: 0 }))).toThrow(/hubs/);
    expect(() => buildWorld(options({ sampleHours: 0 }))).toThrow(/sample-hours/);
    expect(() => buildWorld(options({ userIds: [] }))).toThrow(/user ids/);
  });
});
