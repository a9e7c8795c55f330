import { TUPLES_CHANGED, type Bus, type TuplesChanged } from '@platform/bus';
import type { Logger, WriteCall } from '@platform/service-kit';

/** Longest a write waits for its notice to reach NATS before it is answered anyway. */
const NOTICE_WAIT_MS = 2_000;

/**
 * The notice that tuples may have changed (TUPLES_CHANGED), for every write method of authz's services
 * (announcingWrites): sent once the write is over, committed or failed (a failed write may have been applied in part
 * before it was undone), and awaited until NATS has it, at most `waitMs`, so a change is not answered before the
 * notice that empties its readers' kept decisions is on its way. The notice names nothing: one tuple changes answers
 * about objects it does not name, so readers drop all they keep (libs/authz-client). While the bus is disconnected
 * the notice waits in the client's buffer and goes once the connection is back; the write is not held up for it
 * (readers then serve what they kept for at most their lifetime).
 */
export function tuplesChangedNotice(bus: Bus | undefined, log: Logger, waitMs = NOTICE_WAIT_MS): (call: WriteCall) => Promise<void> {
  return async () => {
    if (!bus) return;
    const connected = bus.health().connected;
    const sent = bus.notify(TUPLES_CHANGED, {} satisfies TuplesChanged).catch((err) => {
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
