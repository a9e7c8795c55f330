import { randomUUID } from 'node:crypto';
import type { Bus, Unsubscribe } from './bus';

/** How long a fence may take to come back before the kept answers are not trusted for the request waiting on it. */
const FENCE_TIMEOUT_MS = 1_000;

/**
 * Makes sure this replica has heard every notice sent before a request arrived, before the request is answered
 * from memory. A writer answers only once NATS has its notice (`notify` flushes), but NATS hands it to the other
 * replicas a little later, and a client's next request can reach one of them first. So before serving kept
 * answers a replica sends a notice to itself (a fence) and waits for it to come back: NATS delivers to each
 * connection in the order it accepted the messages, so every notice it had before the fence has been handled
 * here (the cache evicted) by the time the fence returns. This holds when the replicas share one NATS server;
 * across a cluster of servers a notice may travel a route more slowly than the fence.
 *
 * Requests share fences: one that arrives while a fence is out waits for the next one (the fence out may have
 * left before the request came), so a burst costs at most two round trips to NATS, not one per request.
 */
export class NoticeFence {
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
