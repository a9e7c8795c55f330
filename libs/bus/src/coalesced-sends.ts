/**
 * How two messages of one subject become one: the message that says what both said, or undefined when they are to
 * stay apart (the result would be too large).
 */
export type Merge<P> = (earlier: P, later: P) => P | undefined;

/** A message waiting for the send on its way before it: what it says so far, and who waits for it to be stored. */
interface Waiting<P> {
  payload: P;
  settles: { resolve: () => void; reject: (err: unknown) => void }[];
}

/**
 * Sends with at most one message of a subject on its way: what is sent on that subject meanwhile is merged into one
 * message, sent when the one on its way is stored, so that under many writes at once a subject costs a message per
 * round trip, not per write. A lone message goes at once, as without this, unless `lingerMs` asks it to wait that long
 * for others to go with it (for sends nobody waits on, where a message per write costs more than the wait). Each `send`
 * resolves once the message that carries it is stored (or rejects with its failure). Subjects without a merge are sent
 * as they come.
 */
export class CoalescedSends<P> {
  /** Per subject with a message on its way: the messages waiting, oldest first (more than one only when a merge refused). */
  private readonly lanes = new Map<string, Waiting<P>[]>();
  /** Subjects whose first message waits for others (lingerMs): its timer. */
  private readonly lingering = new Map<string, NodeJS.Timeout>();
  /** Who waits for every lane to be empty (flush). */
  private idle: (() => void)[] = [];

  constructor(
    private readonly store: (subject: string, payload: P) => Promise<void>,
    private readonly mergeOf: (subject: string) => Merge<P> | undefined,
    private readonly opts: { lingerMs?: number } = {},
  ) {}

  send(subject: string, payload: P): Promise<void> {
    const merge = this.mergeOf(subject);
    if (!merge) return this.store(subject, payload);
    let lane = this.lanes.get(subject);
    if (!lane) {
      this.lanes.set(subject, (lane = []));
      if (!this.opts.lingerMs) return this.carry(subject, payload);
      const timer = setTimeout(() => this.goNow(subject), this.opts.lingerMs);
      this.lingering.set(subject, timer);
    }
    const waitingIn = lane;
    return new Promise<void>((resolve, reject) => {
      const last = waitingIn[waitingIn.length - 1];
      const merged = last && merge(last.payload, payload);
      if (last && merged !== undefined) {
        last.payload = merged;
        last.settles.push({ resolve, reject });
      } else waitingIn.push({ payload, settles: [{ resolve, reject }] });
    });
  }

  /** Sends what lingers at once, and resolves once every message sent so far is stored or failed (a process stopping). */
  async flush(): Promise<void> {
    for (const subject of [...this.lingering.keys()]) this.goNow(subject);
    if (this.lanes.size > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /** A lingering subject's wait is over: its first message goes. */
  private goNow(subject: string): void {
    clearTimeout(this.lingering.get(subject));
    this.lingering.delete(subject);
    this.next(subject);
  }

  /** Stores `payload` as the subject's message on its way; once it is stored or failed, the next one goes. */
  private carry(subject: string, payload: P): Promise<void> {
    const sent = this.store(subject, payload);
    void sent.then(
      () => this.next(subject),
      () => this.next(subject),
    );
    return sent;
  }

  /** The send on `subject`'s way ended (or its linger): the oldest waiting message goes, or the lane closes. */
  private next(subject: string): void {
    const lane = this.lanes.get(subject)!;
    const waiting = lane.shift();
    if (!waiting) {
      this.lanes.delete(subject);
      if (this.lanes.size === 0) for (const resolve of this.idle.splice(0)) resolve();
      return;
    }
    this.carry(subject, waiting.payload).then(
      () => waiting.settles.forEach((s) => s.resolve()),
      (err: unknown) => waiting.settles.forEach((s) => s.reject(err)),
    );
  }
}
