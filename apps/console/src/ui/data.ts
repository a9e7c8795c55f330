import { useCallback, useId, useState } from 'react';
import { useActionScope } from './last-action';

/**
 * What a screen shows while it loads: a query's answer (`useQuery`) or several joined (`joined`). `Show` renders it.
 */
export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
}

/** Several loaded values as one, for a screen that needs them all: the first error, else all the answers. */
export function joined<T extends Record<string, unknown>>(parts: { [K in keyof T]: Loaded<T[K]> }): Loaded<{
  [K in keyof T]: NonNullable<T[K]>;
}> {
  const values: Loaded<unknown>[] = Object.values(parts);
  const error = values.find((p) => p.error)?.error;
  if (error || values.some((p) => p.data === undefined)) return { data: undefined, error };
  return {
    data: Object.fromEntries(Object.entries<Loaded<unknown>>(parts).map(([k, p]) => [k, p.data])) as { [K in keyof T]: NonNullable<T[K]> },
    error: undefined,
  };
}

export interface Action {
  busy: boolean;
  /** Why the last run failed (the API's error, or a problem found before sending); only while it is the screen's last action. */
  error: unknown;
  /** What the last successful run said, for a status line; only while it is the screen's last action. */
  done: string | undefined;
  run(fn: () => Promise<string | void>): Promise<boolean>;
  /** A problem found before anything was sent (a form's check), shown as this action's outcome: it too is an action. */
  refuse(problem: string): void;
  clear(): void;
}

/**
 * A user's action (a form's submit, a button): busy while it runs, its error or its outcome shown after, as long as
 * nothing else was done on the screen since (`ActionScope`): messages belong to the last action only.
 */
export function useAction(): Action {
  const id = useId();
  const scope = useActionScope();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const begin = scope?.begin;
  const run = useCallback(
    async (fn: () => Promise<string | void>) => {
      begin?.(id);
      setBusy(true);
      setError(undefined);
      setDone(undefined);
      try {
        setDone((await fn()) || undefined);
        return true;
      } catch (err) {
        setError(err);
        return false;
      } finally {
        setBusy(false);
      }
    },
    [begin, id],
  );
  const refuse = useCallback(
    (problem: string) => {
      begin?.(id);
      setDone(undefined);
      setError(new Error(problem));
    },
    [begin, id],
  );
  const clear = useCallback(() => {
    setError(undefined);
    setDone(undefined);
  }, []);
  // Another action began after this one: its messages are the ones shown.
  const current = !scope || scope.last === id;
  return { busy, error: current ? error : undefined, done: current ? done : undefined, run, refuse, clear };
}
