import { InProcessBus } from './in-process-bus';

/**
 * A bus that hands notices over later, in the order they were sent, as NATS does to each connection: a test can
 * send a notice and ask the next question before the notice has arrived, as a client's next request may reach a
 * replica before the writer's notice does.
 */
export class LaterBus extends InProcessBus {
  private readonly queue: [string, unknown][] = [];

  /** Caught up once every notice sent before the call has been handed over (they go out in order, one a turn). */
  override caughtUp(): true | Promise<boolean> {
    return this.queue.length === 0 ? true : new Promise((resolve) => setImmediate(() => resolve(true)));
  }

  override async notify(subject: string, payload: unknown): Promise<void> {
    this.queue.push([subject, payload]);
    setImmediate(() => {
      const [s, p] = this.queue.shift()!;
      void super.notify(s, p);
    });
  }
}
