import type { BusLogger } from './bus';

/**
 * Longest a writer waits for the notice stream to acknowledge its notice while connected, before it is answered anyway
 * (the notice goes on being sent). Long enough for an acknowledgement under load (milliseconds), far below a call's
 * deadline (BACKEND_DEADLINE_MS, 10 s by default), so a change that committed is answered as such, not as a timeout.
 */
export const NOTICE_WAIT_MS = 2_000;

/**
 * A lost NATS connection as the log tells it: one line when it starts and one when it ends, saying how long it
 * lasted and how many notices were deferred meanwhile, never one line per write. Writers keep going during an
 * outage (a burst of writes used to log a warning each once its notice timed out): a notice sent while the
 * connection is down is left to the bus, which sends it once the connection is back, and the writer is answered at
 * once. Listeners that were away forget what they kept on reconnecting (`onHealthChange`), so a notice that arrives
 * late, or not at all, changes nothing they serve.
 *
 * A notice stream that does not acknowledge a notice within `waitMs` although the connection is up (no leader yet, a
 * stream being made again after the servers restarted) is handled the same way: the writer is answered, the notice
 * goes on being sent, and the log says so once (`notices not acknowledged in time`) and once when the stream
 * acknowledges in time again. Readers that cannot fence meanwhile (the same stream answers their question) serve
 * nothing they kept (docs/decisions.md, D45).
 */
export class Outage {
  private started?: number;
  private deferred = 0;
  /** When the stream stopped acknowledging notices in time while connected, and how many were answered without it. */
  private slowSince?: number;
  private late = 0;
  /** Notices deferred or late that were given up on (never stored), since the last line that reported them. */
  private dropped = 0;
  private readonly waiting = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly log: BusLogger,
    private readonly waitMs = NOTICE_WAIT_MS,
  ) {}

  get down(): boolean {
    return this.started !== undefined;
  }

  /** The connection was lost: logged once, however many writes follow. */
  begin(server: string): void {
    if (this.down) return;
    this.started = Date.now();
    this.deferred = 0;
    this.log.warn({ server }, 'NATS connection lost; reconnecting');
    for (const stopWaiting of this.waiting) stopWaiting();
    this.waiting.clear();
  }

  /** The connection is back: how long it was away and how many notices waited for it. */
  end(server: string): void {
    if (!this.down) return;
    const disconnectedMs = Date.now() - this.started!;
    this.started = undefined;
    this.log.info({ server, disconnectedMs, deferredNotices: this.deferred, ...this.droppedSinceLast() }, 'NATS connection restored');
  }

  /**
   * Sends a notice with `send` and resolves when it is sent, or at once when the connection is down, or when it is
   * lost while it waits, or after `waitMs` without an acknowledgement (the notice is then counted as deferred or
   * late, and goes on being sent).
   */
  async notice(send: () => Promise<void>): Promise<void> {
    const sent = send();
    if (this.down) {
      this.deferred += 1;
      this.goesOn(sent);
      return;
    }
    let stopWaiting!: () => void;
    let timer: NodeJS.Timeout | undefined;
    const lost = new Promise<'lost'>((resolve) => {
      stopWaiting = () => resolve('lost');
      this.waiting.add(stopWaiting);
    });
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.waitMs);
      timer.unref();
    });
    try {
      const outcome = await Promise.race([sent.then(() => 'sent' as const), lost, late]);
      if (outcome === 'sent') this.acknowledgedInTime();
      else if (outcome === 'lost') {
        this.deferred += 1;
        this.goesOn(sent);
      } else {
        this.slow();
        this.goesOn(sent);
      }
    } catch (err) {
      if (!this.down) throw err;
      this.deferred += 1;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(stopWaiting);
    }
  }

  /** The bus is closing: notices still on their way are given up on without a word. */
  close(): void {
    this.closed = true;
  }

  /** A notice the writer no longer waits for: one that is never stored is counted, and the first of a run logged. */
  private goesOn(sent: Promise<void>): void {
    sent.catch((err: unknown) => {
      if (this.closed) return;
      if (this.dropped++ === 0)
        this.log.warn(
          { err: String((err as Error)?.message ?? err) },
          'a deferred notice could not be stored; readers that kept what it announced keep it until their lifetime ends',
        );
    });
  }

  private slow(): void {
    this.late += 1;
    if (this.slowSince !== undefined) return;
    this.slowSince = Date.now();
    this.log.warn(
      { waitMs: this.waitMs },
      'notices not acknowledged in time by the notice stream; writers are answered without waiting, the notices follow',
    );
  }

  private acknowledgedInTime(): void {
    if (this.slowSince === undefined) return;
    const slowMs = Date.now() - this.slowSince;
    const lateNotices = this.late;
    this.slowSince = undefined;
    this.late = 0;
    this.log.info({ slowMs, lateNotices, ...this.droppedSinceLast() }, 'notices acknowledged in time again');
  }

  /** The count of notices given up on since the last report, when there were any (a field of the report's line). */
  private droppedSinceLast(): { droppedNotices?: number } {
    const dropped = this.dropped;
    this.dropped = 0;
    return dropped ? { droppedNotices: dropped } : {};
  }
}
