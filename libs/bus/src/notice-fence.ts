import { randomUUID } from 'node:crypto';
import type { Bus, Unsubscribe } from './bus';

/** How long a fence may take to come back before the kept answers are not trusted for the request waiting on it. */
const FENCE_TIMEOUT_MS = 1_000;

/** A fence as its users see it: one per cache, whether its own or shared. */
export interface Fence {
  /** Resolves true once every notice sent before this call has been handled; false when the fence did not return in time. */
  pass(): Promise<boolean>;
  close(): Promise<void>;
}

/** The fence each bus's caches share, and how many of them use it. */
const shared = new WeakMap<Bus, { fence: Promise<NoticeFence>; users: number }>();

/**
 * Makes sure this replica has heard every notice sent before a request arrived, before the request is answered
 * from memory. A writer answers only once the bus has its notice in its one order of notices (`notify`: on NATS,
 * stored on the replicated notice stream), but the other replicas hear it a little later, and a client's next
 * request can reach one of them first. So before serving kept answers a replica sends a notice to itself (a fence)
 * and waits for it to come back: every replica hears notices in the bus's order, so every notice acknowledged before
 * the fence was sent has been handled here (the cache evicted) by the time the fence returns, whichever NATS server
 * of a cluster the writer and this replica use. A notice lost on the way shows as a gap in that order, and the
 * caches start over (`Bus.onNoticesMissed`) before the fence is handed over.
 *
 * Requests share fences: one that arrives while a fence is out waits for the next one (the fence out may have
 * left before the request came), so a burst costs at most two round trips to NATS, not one per request.
 */
export class NoticeFence implements Fence {
  private readonly subject: string;
  private sent = 0;
  private readonly waiting = new Map<number, (passed: boolean) => void>();
  private current: Promise<boolean> | undefined;
  private next: Promise<boolean> | undefined;
  private unlisten: Unsubscribe | undefined;

  private constructor(
    private readonly bus: Bus,
    subjectPrefix: string,
  ) {
    this.subject = `${subjectPrefix}.${randomUUID()}`;
  }

  /** A fence of this replica's own, on a subject under `subjectPrefix` (e.g. `authz.decisions.fence`). */
  static async open(bus: Bus, subjectPrefix: string): Promise<NoticeFence> {
    const fence = new NoticeFence(bus, subjectPrefix);
    fence.unlisten = await bus.listen(fence.subject, (_subject, payload) => fence.returned(Number((payload as { n?: unknown }).n)));
    return fence;
  }

  /**
   * The fence of every cache that follows `bus` in this process. All of them hear notices through the same
   * subscription of the bus, in the bus's one order, so a fence that came back proves for each of them what it proves
   * for one: concurrent requests for different caches share rounds (fewer fences on the bus, which every process
   * hears). Each user closes its own; the last one closes the fence.
   */
  static async shared(bus: Bus): Promise<Fence> {
    let entry = shared.get(bus);
    if (!entry) {
      const fence = NoticeFence.open(bus, 'fence');
      shared.set(bus, (entry = { fence, users: 0 }));
      fence.catch(() => shared.get(bus) === entry && shared.delete(bus));
    }
    entry.users++;
    const fence = await entry.fence;
    const lease = entry;
    let closed = false;
    return {
      pass: () => fence.pass(),
      close: async () => {
        if (closed) return;
        closed = true;
        if (--lease.users > 0) return;
        if (shared.get(bus) === lease) shared.delete(bus);
        await fence.close();
      },
    };
  }

  /** Resolves true once every notice sent before this call has been handled; false when the fence did not return in time. */
  pass(): Promise<boolean> {
    if (!this.current) return (this.current = this.round());
    return (this.next ??= this.current.then(() => {
      this.next = undefined;
      return (this.current = this.round());
    }));
  }

  async close(): Promise<void> {
    await this.unlisten?.();
    for (const resolve of this.waiting.values()) resolve(false);
    this.waiting.clear();
  }

  private round(): Promise<boolean> {
    const round: Promise<boolean> = this.roundTrip().finally(() => {
      if (this.current === round) this.current = undefined;
    });
    return round;
  }

  private roundTrip(): Promise<boolean> {
    const n = ++this.sent;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => settle(false), FENCE_TIMEOUT_MS);
      timer.unref();
      const settle = (passed: boolean) => {
        clearTimeout(timer);
        this.waiting.delete(n);
        resolve(passed);
      };
      this.waiting.set(n, settle);
      this.bus.notify(this.subject, { n }).catch(() => settle(false));
    });
  }

  /** A fence came back: it and every earlier one have passed. */
  private returned(n: number): void {
    for (const [sent, settle] of [...this.waiting]) if (sent <= n) settle(true);
  }
}
