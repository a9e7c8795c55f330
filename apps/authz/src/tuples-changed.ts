import { TUPLES_CHANGED, tupleTags, type Bus, type TuplesChanged } from '@platform/bus';
import type { Logger, ServiceBinding, WriteCall } from '@platform/service-kit';
import type { AuthzEngine, Tuple } from './engine';

/** What a notice reads of the tuples: the engine's Read, and the embedded engine's tuples in memory when it has them. */
type Reader = Pick<AuthzEngine, 'readTuples'> & { keptUsers?(object: string, relation: string): Promise<string[] | undefined> };
import { recordingWrites, tuplesWritten } from './engine/recorded';

/** Longest a write waits for its notice to reach NATS before it is answered anyway. */
const NOTICE_WAIT_MS = 2_000;

/**
 * Most tags one notice names; a larger write (a bulk import's batch) names everything instead, so that a notice stays
 * far under NATS's message size and a reader's eviction stays cheap.
 */
export const MAX_NAMED_TAGS = 5_000;

/** The types whose objects belong to an organization through a parent relation (apps/authz/model/platform.fga). */
const PARENT_RELATION: Readonly<Record<string, string>> = {
  team: 'organization',
  role: 'organization',
  cluster: 'owner',
  contract: 'owner',
  robot_ac: 'owner',
  token: 'owner',
};

/**
 * The binding with every write method recording the tuples it writes and deletes (engine/recorded.ts), for its notice:
 * wrapped around `announcingWrites`, so that the notice, sent as the call ends, reads what the call wrote.
 */
export function recordingTupleWrites<D>(binding: ServiceBinding<D>): ServiceBinding<D> {
  const handlers = { ...binding.handlers };
  for (const name of Object.keys(handlers) as (keyof D)[]) {
    const handle = binding.handlers[name] as (request: unknown, ctx: unknown) => Promise<unknown>;
    handlers[name] = ((request: unknown, ctx: unknown) => recordingWrites(() => handle(request, ctx))) as never;
  }
  return { ...binding, handlers };
}

/**
 * The notice that tuples changed (TUPLES_CHANGED), for every write method of authz's services (announcingWrites): sent
 * once the write is over, committed or failed (a failed write may have been applied in part before it was undone), and
 * awaited until NATS has it, at most `waitMs`, so a change is not answered before the notice that drops its readers'
 * kept answers is on its way. It names what the call wrote or tried to (`tupleTags` of each tuple) and the
 * organizations those objects belong to; a reader drops only what was read from them (libs/authz-client). A write
 * that touched no tuple sends none. While the bus is disconnected the notice waits in the client's buffer and goes once
 * the connection is back; the write is not held up for it (readers then serve what they kept for at most their
 * lifetime).
 */
export function tuplesChangedNotice(
  bus: Bus | undefined,
  log: Logger,
  engine: Reader,
  waitMs = NOTICE_WAIT_MS,
): (call: WriteCall) => Promise<void> {
  return async () => {
    if (!bus) return;
    const tuples = tuplesWritten();
    if (tuples.length === 0) return;
    const notice = await noticeOf(tuples, engine).catch((err: unknown): TuplesChanged => {
      log.warn({ err }, 'could not name what a tuple write touched; its notice names everything');
      return { all: true };
    });
    const connected = bus.health().connected;
    const sent = bus.notify(TUPLES_CHANGED, notice).catch((err) => {
      log.warn({ err }, 'could not send a tuples notice');
    });
    if (!connected) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
      timer.unref();
    });
    await Promise.race([sent, waited]);
    clearTimeout(timer);
  };
}

/** What a notice of these tuples names: their tags and their objects' organizations, or everything. */
export async function noticeOf(tuples: readonly Tuple[], engine: Reader): Promise<TuplesChanged> {
  const tags = new Set<string>();
  for (const t of tuples) for (const tag of tupleTags(t)) tags.add(tag);
  if (tags.size > MAX_NAMED_TAGS) return { all: true };
  const orgs = await new Organizations(tuples, engine).of(tuples);
  return orgs === 'all' ? { all: true } : { tags: [...tags], relations: true, orgs };
}

/**
 * The organizations objects belong to: an organization itself; a team or role through its `organization`, a cluster,
 * contract, robot account or token through its `owner` (an organization, or a user, which belongs to none), read from
 * the write itself first (a team created or deleted with its parent) and else from the tuples (those in memory when
 * the engine holds them all, so a write's notice costs no statement). The site's objects reach
 * every organization (`admin from site`), and an object whose organization cannot be found might belong to any: both
 * answer 'all'.
 */
class Organizations {
  private readonly known = new Map<string, number[] | 'all'>();

  constructor(
    private readonly written: readonly Tuple[],
    private readonly engine: Reader,
  ) {}

  async of(tuples: readonly Tuple[]): Promise<number[] | 'all'> {
    const orgs = new Set<number>();
    for (const t of tuples) {
      const hash = t.user.indexOf('#');
      const user = hash < 0 ? t.user : t.user.slice(0, hash);
      // The user's organization too: what is kept by organization may show what a tuple says of its objects (the
      // roles of a team). The site as a user (`site:platform site organization:7`) changes only the object's answers.
      for (const object of user.startsWith('site:') ? [t.object] : [t.object, user]) {
        const found = await this.ofObject(object, 0);
        if (found === 'all') return 'all';
        for (const id of found) orgs.add(id);
      }
    }
    return [...orgs];
  }

  private async ofObject(object: string, depth: number): Promise<number[] | 'all'> {
    const [type, id] = [object.slice(0, object.indexOf(':')), object.slice(object.indexOf(':') + 1)];
    if (type === 'organization') return [Number(id)];
    if (type === 'user') return [];
    if (type === 'site') return 'all';
    const relation = PARENT_RELATION[type];
    if (!relation || depth > 2 || id === '*') return 'all';
    const key = object;
    const cached = this.known.get(key);
    if (cached) return cached;
    const parents = new Set(this.written.filter((t) => t.object === object && t.relation === relation).map((t) => t.user));
    const kept = await this.engine.keptUsers?.(object, relation);
    for (const user of kept ?? (await this.engine.readTuples({ object, relation })).map((t) => t.user)) parents.add(user);
    let found: number[] | 'all' = parents.size === 0 ? 'all' : [];
    for (const parent of parents) {
      const theirs = await this.ofObject(parent, depth + 1);
      if (theirs === 'all') {
        found = 'all';
        break;
      }
      (found as number[]).push(...theirs);
    }
    this.known.set(key, found);
    return found;
  }
}
