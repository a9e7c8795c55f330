import { useCallback, useEffect, useState, type DependencyList } from 'react';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again (after a change the screen made). */
  reload(): void;
}

/**
 * Loads what a screen shows, again whenever `deps` change. Each answer is kept with the deps it was asked for,
 * so an answer for an earlier org or month never shows as the current one.
 */
export function useLoad<T>(load: () => Promise<T>, deps: DependencyList): Loaded<T> {
  const [round, setRound] = useState(0);
  const screen = JSON.stringify(deps);
  const key = `${round}#${screen}`;
  const [state, setState] = useState<{ key?: string; data?: T; error?: unknown }>({});
  useEffect(() => {
    let current = true;
    load().then(
      (data) => current && setState({ key, data }),
      (error: unknown) => current && setState({ key, error }),
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  const fresh = state.key === key;
  // While reloading the same screen the last answer stays visible; a different screen starts empty.
  const sameScreen = state.key?.slice(state.key.indexOf('#') + 1) === screen;
  return {
    data: fresh || sameScreen ? state.data : undefined,
    error: fresh ? state.error : undefined,
    loading: !fresh,
    reload,
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
