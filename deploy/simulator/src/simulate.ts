import {
  answerResourceHistory,
  consumeDesiredState,
  seal,
  signerOf,
  subjectOf,
  toBusPayload,
  type ReportKind,
  type Signer,
} from '@platform/agent-protocol';
import type { Bus, Unsubscribe } from '@platform/bus';
import { ApiError, PlatformApi, type ApiCredentials } from './api';
import { applyDesiredState, inventoryAfterApply } from './desired';
import { billingMessagesOf, countMessages, inventoryOf, resourceHistoryOf, type SimMessage } from './messages';
import { readState, writeState, type EnrolledHub } from './state';
import { alignNow, buildWorld, clustersOf, DEFAULTS, type SimHub, type World } from './world';

export interface SimulateOptions {
  /** The platform's REST API and the account to enroll with (an owner of `org`, or a site admin). */
  api: ApiCredentials;
  /** Organization slug; created (the caller its owner) when missing. */
  org: string;
  /** Hub clusters (default 1). */
  hubs?: number;
  /** Managed clusters per hub (default 3). */
  spokes?: number;
  /** Months of usage up to `now` (default 3). */
  months?: number;
  /** Seed of everything generated (default 1). */
  seed?: number;
  /** Usage sample interval, hours (default 6). */
  sampleHours?: number;
  /**
   * Where reports go: the process's in-process bus, or how to open NATS in the namespace the platform hands out with
   * the hubs' credentials at enrollment (`(namespace) => connectBus(natsUrl, 'simulator', { namespace })`), which the
   * simulation then closes when it stops.
   */
  bus: Bus | ((namespace: string) => Promise<Bus>);
  /**
   * Platform account ids the reports name as their users (default: the organization's). Ingestion attributes a
   * report to the holder the platform knows (for these unissued licenses, the organization owning the cluster)
   * and refuses another id as a claim, so others only exercise that (docs/billing-ingestion.md).
   */
  userIds?: number[];
  /** End of the simulated period (default: the state file's from an earlier run, else now), aligned down to the sample grid. */
  now?: Date | number;
  /** Path of the state file keeping enrolled hubs' nkey seeds (mode 0600; it holds credentials). */
  state?: string;
  /** Called with progress, at most every `progressEveryMs` (default 1000) and at each phase. */
  onProgress?: (progress: Progress) => void;
  progressEveryMs?: number;
  /** How long to wait for the platform to apply the hubs' inventory before sending the rest (default 60 s). */
  inventoryTimeoutMs?: number;
  /** Answer resource-history requests for every simulated cluster until `stop()` (default true). */
  answerRequests?: boolean;
}

export type Phase = 'sign-in' | 'enroll' | 'inventory' | 'reports' | 'done';

export interface Progress {
  phase: Phase;
  /** What is happening, in a few words. */
  message: string;
  published: Record<ReportKind, number>;
  total: Record<ReportKind, number>;
}

/** What the demo seed and a caller need to find the simulated data. */
export interface SimulationResult {
  org: string;
  seed: number;
  startMs: number;
  endMs: number;
  userIds: number[];
  hubs: {
    name: string;
    uid: string;
    accountID: number;
    /** Enrolled by an earlier run (credentials from the state file). */
    reused: boolean;
    spokes: { name: string; uid: string }[];
    namespaces: string[];
  }[];
  /** Every simulated cluster UID (hubs and spokes). */
  clusterUids: string[];
  published: Record<ReportKind, number>;
  /** License usage, resource events and usage samples sent (what billing ingestion applies). */
  billingReports: number;
  /** One licensed object of the first hub with license usage, resource events and usage samples (the manifest's `usage`). */
  usage: {
    uid: number;
    cid: string;
    lid: string;
    product: string;
    eventKey: string;
    eventVersion: number;
    objectID: string;
    namespace: string;
    year: string;
    month: string;
  };
}

export interface Simulation {
  result: SimulationResult;
  /** Stops answering resource-history requests. */
  stop(): Promise<void>;
}

/** A hub name already enrolled whose credentials this run does not have. */
export class HubTakenError extends Error {
  constructor(hub: string, org: string, state: string | undefined) {
    super(
      `hub ${hub} is already enrolled in organization ${org}, and its bus credentials are answered only once, at enrollment` +
        (state ? `; ${state} does not hold them.` : '.') +
        ' Pass the state file of the run that enrolled it (--state), or use another --org or --seed.',
    );
    this.name = 'HubTakenError';
  }
}

const PUBLISH_WINDOW = 64;

/**
 * Plays `hubs` hub clusters with `spokes` managed clusters each: enrolls the hubs over the REST API, then
 * speaks only the agent protocol on `bus` — one inventory report per hub, then license usage, resource events
 * and usage samples of four products over `months` months — and answers resource-history requests until
 * `stop()`. Deterministic for a seed, `now` and the options: a re-run sends the same message ids.
 */
export async function simulate(opts: SimulateOptions): Promise<Simulation> {
  const seed = opts.seed ?? DEFAULTS.seed;
  const sampleHours = opts.sampleHours ?? DEFAULTS.sampleHours;
  const state = readState(opts.state);
  const orgState = (state.orgs[opts.org] ??= { hubs: {} });
  const nowMs = opts.now !== undefined ? new Date(opts.now).getTime() : (orgState.nowMs ?? Date.now());
  if (!Number.isFinite(nowMs)) throw new Error(`now ${String(opts.now)} is not a time`);

  const published: Record<ReportKind, number> = { inventory: 0, 'license-usage': 0, 'resource-event': 0, 'usage-sample': 0 };
  let total: Record<ReportKind, number> = { ...published };
  let lastReport = 0;
  const report = (phase: Phase, message: string, force = true) => {
    const t = Date.now();
    if (!opts.onProgress || (!force && t - lastReport < (opts.progressEveryMs ?? 1000))) return;
    lastReport = t;
    opts.onProgress({ phase, message, published: { ...published }, total: { ...total } });
  };

  report('sign-in', `signing in to ${opts.api.url} as ${opts.api.username}`);
  const api = await PlatformApi.signIn(opts.api);
  try {
    // An agent reports its license's holder: for licenses the platform did not issue, the organization owning the cluster.
    const orgId = await ensureOrg(api, opts.org);
    const world = buildWorld({
      org: opts.org,
      hubs: opts.hubs ?? DEFAULTS.hubs,
      spokes: opts.spokes ?? DEFAULTS.spokes,
      months: opts.months ?? DEFAULTS.months,
      seed,
      sampleHours,
      userIds: opts.userIds ?? [orgId],
      nowMs: alignNow(nowMs, sampleHours),
    });
    total = countMessages(world);

    report('enroll', `enrolling ${world.hubs.length} hub(s) in ${opts.org}`);
    const creds = await enrollHubs(api, world, opts, state);
    orgState.nowMs ??= world.endMs;
    writeState(opts.state, state);

    const signers = new Map(world.hubs.map((h) => [h.state.uid, signerOf(creds.get(h.state.name)!.seed)]));
    const opened = typeof opts.bus === 'function' ? await opts.bus(namespaceOf(creds, opts.state)) : undefined;
    const bus = opened ?? (opts.bus as Bus);
    const closeOpened = async () => void (await opened?.close().catch(() => {}));
    const publish = async (m: SimMessage, signer: Signer) => {
      const envelope = seal(m.kind, m.payload as never, signer, { messageId: m.messageId, sentAt: m.sentAtMs });
      await bus.publish(subjectOf(m.clusterUid, m.kind), toBusPayload(envelope));
      published[m.kind]++;
      report('reports', 'publishing', false);
    };

    const stops: Unsubscribe[] = [];
    const stopAll = async () => {
      await Promise.all(stops.splice(0).map((s) => s().catch(() => {})));
      await closeOpened();
    };
    try {
      report('inventory', 'publishing inventory');
      for (const hub of world.hubs) await publish(inventoryOf(world, hub), signers.get(hub.state.uid)!);
      // Reports about spokes are refused until the hub's inventory has made them the organization's: wait for it.
      report('inventory', 'waiting for the platform to apply the inventory');
      await waitForInventory(api, world, opts.inventoryTimeoutMs ?? 60_000);
    } catch (err) {
      await closeOpened();
      throw err;
    }

    try {
      if (opts.answerRequests ?? true) {
        for (const hub of world.hubs)
          for (const cluster of clustersOf(hub))
            stops.push(
              await answerResourceHistory(bus, cluster.state.uid, signers.get(hub.state.uid)!, async (req) =>
                resourceHistoryOf(world, cluster, req),
              ),
            );
        // Each hub's agent applies the desired state the platform sends (cluster sets' feature sets) and reports
        // what runs then, in a new inventory snapshot.
        for (const hub of world.hubs) {
          let lastObservedAtMs = world.endMs;
          stops.push(
            await consumeDesiredState(bus, hub.state.uid, async (desired) => {
              if (!applyDesiredState(hub, desired)) return;
              const m = inventoryAfterApply(hub, lastObservedAtMs);
              await publish(m, signers.get(hub.state.uid)!);
              lastObservedAtMs = (m.payload as { observedAtMs: number }).observedAtMs;
            }),
          );
        }
      }

      const hubOf = new Map(world.hubs.flatMap((h) => clustersOf(h).map((c) => [c.state.uid, h.state.uid] as const)));
      report('reports', 'publishing');
      // Up to PUBLISH_WINDOW publishes in flight (JetStream acknowledges each); the first failure stops the run.
      const inFlight = new Set<Promise<void>>();
      let failure: { error: unknown } | undefined;
      for (const m of billingMessagesOf(world)) {
        if (failure) break;
        const p: Promise<void> = publish(m, signers.get(hubOf.get(m.clusterUid)!)!)
          .catch((error) => void (failure ??= { error }))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        if (inFlight.size >= PUBLISH_WINDOW) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      if (failure) throw failure.error;
      report('done', 'published');
    } catch (err) {
      await stopAll();
      throw err;
    }

    const result = resultOf(world, creds, published);
    return {
      result,
      stop: stopAll,
    };
  } finally {
    await api.close();
  }
}

/** The namespace on NATS the platform handed out with the hubs' credentials (one platform, one namespace). */
function namespaceOf(creds: Map<string, EnrolledHub>, state: string | undefined): string {
  const given = new Set([...creds.values()].map((c) => c.namespace));
  const [namespace] = given;
  if (given.size !== 1 || namespace === undefined)
    throw new Error(
      `${state ?? 'the state file'} does not say which namespace on NATS the platform handed out with its hubs' credentials ` +
        '(an older simulator wrote it): use another --org or --seed, or another --state, so that the hubs are enrolled again',
    );
  return namespace;
}

/** The organization's account id; the organization is made (the caller its owner) when missing. */
async function ensureOrg(api: PlatformApi, org: string): Promise<number> {
  const got = await api.call('GET', `/orgs/${encodeURIComponent(org)}`);
  if (got.status === 200) return (got.body as { id: number }).id;
  if (got.status !== 404) throw new ApiError(got.status, got.body, `GET /orgs/${org}`);
  const made = await api.call('POST', '/orgs', { username: org });
  if (made.status === 201) return (made.body as { id: number }).id;
  // Made meanwhile by someone else: fine if it is visible now.
  const again = await api.call('GET', `/orgs/${encodeURIComponent(org)}`);
  if (again.status === 200) return (again.body as { id: number }).id;
  throw new ApiError(made.status, made.body, `creating organization ${org} (POST /orgs)`);
}

/** Enrolls each hub, or reuses it when the state file has its credentials and the platform lists it with the same UID. */
async function enrollHubs(
  api: PlatformApi,
  world: World,
  opts: SimulateOptions,
  state: ReturnType<typeof readState>,
): Promise<Map<string, EnrolledHub & { reused: boolean }>> {
  const org = opts.org;
  const listed = (await api.expect('GET', `/orgs/${encodeURIComponent(org)}/clusters`, [200])).body as { name: string; uid: string }[];
  const orgState = state.orgs[org];
  const creds = new Map<string, EnrolledHub & { reused: boolean }>();
  for (const hub of world.hubs) {
    const name = hub.state.name;
    const known = orgState.hubs[name];
    const onPlatform = listed.find((c) => c.name === name);
    if (onPlatform) {
      if (known && known.uid === onPlatform.uid) {
        creds.set(name, { ...known, reused: true });
        continue;
      }
      throw new HubTakenError(name, org, opts.state);
    }
    const enrolled = await api.call('POST', `/orgs/${encodeURIComponent(org)}/clusters`, {
      name,
      uid: hub.state.uid,
      displayName: hub.state.displayName,
      provider: hub.state.provider,
      managerEndpoint: hub.managerEndpoint,
    });
    if (enrolled.status === 409) throw new HubTakenError(name, org, opts.state);
    if (enrolled.status !== 201) throw new ApiError(enrolled.status, enrolled.body, `enrolling hub ${name} (POST /orgs/${org}/clusters)`);
    const bus = enrolled.body.bus as { accountID: number; publicKey: string; seed: string; namespace: string };
    const entry = { uid: hub.state.uid, accountID: bus.accountID, publicKey: bus.publicKey, seed: bus.seed, namespace: bus.namespace };
    orgState.hubs[name] = entry;
    // Kept at once: the seed is never answered again.
    writeState(opts.state, state);
    creds.set(name, { ...entry, reused: false });
  }
  return creds;
}

/** Waits until the platform lists every hub with the node count and version its inventory report gave. */
async function waitForInventory(api: PlatformApi, world: World, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const applied = (listed: { uid: string; nodeCount: number; kubernetesVersion: string }[], hub: SimHub) =>
    listed.some(
      (c) => c.uid === hub.state.uid && c.nodeCount === hub.state.nodeCount && c.kubernetesVersion === hub.state.kubernetesVersion,
    );
  for (;;) {
    const listed = (await api.expect('GET', `/orgs/${encodeURIComponent(world.options.org)}/clusters`, [200])).body;
    const pending = world.hubs.filter((h) => !applied(listed, h));
    if (pending.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(
        `the platform did not apply the inventory of hub ${pending.map((h) => h.state.name).join(', ')} within ${timeoutMs / 1000} s: ` +
          'is it consuming agent reports from this bus? (a separate process needs --nats with the NATS_URL the platform uses)',
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

function resultOf(
  world: World,
  creds: Map<string, EnrolledHub & { reused: boolean }>,
  published: Record<ReportKind, number>,
): SimulationResult {
  const hub = world.hubs[0];
  const o = hub.objects[0];
  // A past month with usage samples: the month before the period's last, unless the object started in the last one.
  const last = new Date(world.endMs - 1);
  const lastMonthStart = Date.UTC(last.getUTCFullYear(), last.getUTCMonth(), 1);
  const month = new Date(o.createdMs < lastMonthStart ? Date.UTC(last.getUTCFullYear(), last.getUTCMonth() - 1, 1) : lastMonthStart);
  return {
    org: world.options.org,
    seed: world.options.seed,
    startMs: world.startMs,
    endMs: world.endMs,
    userIds: world.options.userIds,
    hubs: world.hubs.map((h) => ({
      name: h.state.name,
      uid: h.state.uid,
      accountID: creds.get(h.state.name)!.accountID,
      reused: creds.get(h.state.name)!.reused,
      spokes: h.spokes.map((s) => ({ name: s.state.name, uid: s.state.uid })),
      namespaces: h.state.namespaces.map((n) => n.name),
    })),
    clusterUids: world.hubs.flatMap((h) => clustersOf(h).map((c) => c.state.uid)),
    published: { ...published },
    billingReports: published['license-usage'] + published['resource-event'] + published['usage-sample'],
    usage: {
      uid: o.userId,
      cid: hub.state.uid,
      lid: o.licenseId,
      product: o.product,
      eventKey: o.key,
      eventVersion: 1,
      objectID: o.uid,
      namespace: o.namespace,
      year: String(month.getUTCFullYear()),
      month: String(month.getUTCMonth() + 1).padStart(2, '0'),
    },
  };
}

/** One line of progress: `phase: inventory 1/1, license-usage 120/650, ...`. */
export function formatProgress(p: Progress): string {
  const kinds = (Object.keys(p.total) as ReportKind[]).map((k) => `${k} ${p.published[k]}/${p.total[k]}`).join(', ');
  return Object.values(p.total).some((n) => n > 0) ? `${p.message}: ${kinds}` : p.message;
}
