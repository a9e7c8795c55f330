import type { Database } from '@platform/db';
import type { Logger } from '@platform/service-kit';

/** The longest a timer waits before looking again (a far end, or one added by another replica's write). */
const LOOK_AGAIN_MS = 60 * 60 * 1000;

/**
 * A contract that ends stops being active without any write: what readers keep of the contracts (an active list, a
 * cluster's status, the duplicate features of other active contracts) changes at that moment. This announces it then,
 * as a write would be: it finds the next end of a contract not revoked, waits for it, announces, and looks again. Every
 * replica runs one (a notice twice has the effect of one); a write announced here makes it look again, since the write
 * may have set an earlier end.
 */
export class ContractEndings {
  private timer: NodeJS.Timeout | undefined;
  /** The end waited for, if any. */
  private next: number | undefined;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly announce: () => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** Finds the next end and waits for it (again after every write: call it once the write is announced). */
  async schedule(): Promise<void> {
    if (this.stopped) return;
    let next: Date | undefined;
    try {
      const row = await this.db
        .table('contracts')
        .where({ revoked: false })
        .andWhere('end_at', '>', new Date())
        .min({ next: 'end_at' })
        .first();
      next = row?.next ? new Date(row.next as string | Date) : undefined;
    } catch (err) {
      this.log.warn({ err }, 'could not find the next contract end; looking again later');
    }
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.next = next?.getTime();
    const wait = next ? Math.max(0, next.getTime() - Date.now()) + 1_000 : LOOK_AGAIN_MS;
    this.timer = setTimeout(() => void this.fire(), Math.min(wait, LOOK_AGAIN_MS));
    this.timer.unref();
  }

  private async fire(): Promise<void> {
    if (this.next !== undefined && this.next <= Date.now()) await this.announce();
    await this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
