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
 * round trip, not per write. A lone message goes at once, as without this. Each `send` resolves once the message that
 * carries it is stored (or rejects with its failure). Subjects without a merge are sent as they come.
 */
export class CoalescedSends<P> {
  /** Per subject with a message on its way: the messages waiting, oldest first (more than one only when a merge refused). */
  private readonly lanes = new Map<string, Waiting<P>[]>();

  constructor(
    private readonly store: (subject: string, payload: P) => Promise<void>,
    private readonly mergeOf: (subject: string) => Merge<P> | undefined,
  ) {}

  send(subject: string, payload: P): Promise<void> {
    const merge = this.mergeOf(subject);
    if (!merge) return this.store(subject, payload);
    const lane = this.lanes.get(subject);
    if (!lane) {
      this.lanes.set(subject, []);
      return this.carry(subject, payload);
    }
    return new Promise<void>((resolve, reject) => {
      const last = lane[lane.length - 1];
      const merged = last && merge(last.payload, payload);
      if (last && merged !== undefined) {
        last.payload = merged;
        last.settles.push({ resolve, reject });
      } else lane.push({ payload, settles: [{ resolve, reject }] });
    });
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

  /** The send on `subject`'s way ended: the oldest waiting message goes, or the lane closes. */
  private next(subject: string): void {
    const lane = this.lanes.get(subject)!;
    const waiting = lane.shift();
    if (!waiting) {
      this.lanes.delete(subject);
      return;
    }
    this.carry(subject, waiting.payload).then(
      () => waiting.settles.forEach((s) => s.resolve()),
      (err: unknown) => waiting.settles.forEach((s) => s.reject(err)),
    );
  }
}
