/** How often every process says on the notice stream that it is there (notices or not: D133). */
export const HEARTBEAT_EVERY_MS = 1_000;
/**
 * A process not heard from on the stream for this long may be cut off from it (its NATS node paused or partitioned
 * away) while it goes on writing: its notices would not reach the stream, so no kept answer is trusted meanwhile.
 */
export const SILENT_AFTER_MS = 3_000;
/**
 * A process silent for this long is forgotten: it stopped without a goodbye (killed), and readers trust their caches
 * again. One that was only cut off and is heard again afterwards counts as new, and caches start over then.
 */
export const FORGET_AFTER_MS = 60_000;

/** What hearing from a process means for the kept answers. */
export type Heard = 'known' | 'first' | 'back';

/**
 * The trust rule of kept answers across processes (docs/decisions.md, D45 as amended): a reader trusts what it kept only
 * while every process it has heard from on the notice stream in the last FORGET_AFTER_MS was heard from in the last
 * SILENT_AFTER_MS. Every process heartbeats each HEARTBEAT_EVERY_MS (its notices count too) and says goodbye when it
 * stops, so a writer whose node is cut off falls silent, and within SILENT_AFTER_MS every reader reads from the owners
 * (which read the database) instead. The clock is injected (performance.now() by default).
 */
export class Liveness {
  /** When each process was last heard from. */
  private readonly heard = new Map<string, number>();

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly silentAfterMs = SILENT_AFTER_MS,
    private readonly forgetAfterMs = FORGET_AFTER_MS,
  ) {}

  /**
   * A heartbeat or notice of `id` was handed over here. 'first': never heard of (or forgotten); 'back': silent until now,
   * so its notices meanwhile may have been lost on the way and whatever was kept must start over.
   */
  heardFrom(id: string): Heard {
    const now = this.now();
    const last = this.heard.get(id);
    this.heard.set(id, now);
    if (last === undefined || now - last > this.forgetAfterMs) return 'first';
    return now - last > this.silentAfterMs ? 'back' : 'known';
  }

  /** `id` stopped cleanly: no longer waited for. */
  gone(id: string): void {
    this.heard.delete(id);
  }

  /** A process that is silent now (kept answers are not to be trusted), or undefined; forgets those silent too long. */
  silent(): string | undefined {
    const now = this.now();
    let found: string | undefined;
    for (const [id, at] of this.heard) {
      if (now - at > this.forgetAfterMs) this.heard.delete(id);
      else if (!found && now - at > this.silentAfterMs) found = id;
    }
    return found;
  }
}
