import { useCallback, useState } from 'react';

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
  error: unknown;
  /** What the last successful run said, for a status line. */
  done: string | undefined;
  run(fn: () => Promise<string | void>): Promise<boolean>;
  clear(): void;
}

/** A user's action (a form's submit, a button): busy while it runs, its error or its outcome shown after. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const run = useCallback(async (fn: () => Promise<string | void>) => {
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
  }, []);
  const clear = useCallback(() => {
    setError(undefined);
    setDone(undefined);
  }, []);
  return { busy, error, done, run, clear };
}
