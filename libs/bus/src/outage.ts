import type { BusLogger } from './bus';

/**
 * A lost NATS connection as the log tells it: one line when it starts and one when it ends, saying how long it
 * lasted and how many notices were deferred meanwhile, never one line per write. Writers keep going during an
 * outage (a burst of writes used to log a warning each once its notice timed out): a notice sent while the
 * connection is down is left with the client, which sends it once the connection is back, and the writer is
 * answered at once. Listeners that were away forget what they kept on reconnecting (`onHealthChange`), so a notice
 * that arrives late, or not at all, changes nothing they serve.
 */
export class Outage {
  private started?: number;
  private deferred = 0;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly log: BusLogger) {}

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
    this.log.info({ server, disconnectedMs, deferredNotices: this.deferred }, 'NATS connection restored');
  }

  /**
   * Sends a notice with `send` and resolves when it is sent, or at once when the connection is down or is lost
   * while it waits (the notice is then counted as deferred, and whatever becomes of it is the client's).
   */
  async notice(send: () => Promise<void>): Promise<void> {
    const sent = send();
    if (this.down) {
      this.deferred += 1;
      sent.catch(() => undefined);
      return;
    }
    let stopWaiting!: () => void;
    const lost = new Promise<'lost'>((resolve) => {
      stopWaiting = () => resolve('lost');
      this.waiting.add(stopWaiting);
    });
    try {
      if ((await Promise.race([sent.then(() => 'sent' as const), lost])) === 'lost') {
        this.deferred += 1;
        sent.catch(() => undefined);
      }
    } catch (err) {
      if (!this.down) throw err;
      this.deferred += 1;
    } finally {
      this.waiting.delete(stopWaiting);
    }
  }
}
