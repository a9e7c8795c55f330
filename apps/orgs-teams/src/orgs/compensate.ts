import type { Logger } from '@platform/service-kit';

/**
 * One logical change across this service's rows and authz (decision D6): `apply` changes our rows and
 * answers what it did, `remote` makes the authz side match, and when `remote` fails `undo` puts our rows
 * back before the failure is rethrown. No transaction is open while `remote` runs.
 */
export async function compensating<T>(
  log: Logger | undefined,
  apply: () => Promise<T>,
  remote: (applied: T) => Promise<void>,
  undo: (applied: T) => Promise<void>,
): Promise<T> {
  const applied = await apply();
  try {
    await remote(applied);
  } catch (err) {
    try {
      await undo(applied);
    } catch (undoErr) {
      // The data and the tuples now disagree; say so loudly, the original failure still goes to the caller.
      log?.error({ err: undoErr, cause: err }, 'could not undo a change whose authorization tuples failed');
    }
    throw err;
  }
  return applied;
}
