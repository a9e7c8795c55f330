import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { useLocation } from 'react-router';

/**
 * Which action of the screen ran last. A screen's messages (an action's outcome, a form's problem, a notice a screen
 * was opened with) belong to the last thing the user did: when another action starts, the messages of the ones before
 * go, so an old "Created ..." never sits under a new error. Every `useAction` takes part; opening another screen
 * starts afresh.
 */
interface Scope {
  /** The id of the action that began last; undefined until one begins on this screen. */
  last: string | undefined;
  begin(id: string): void;
}

const LastAction = createContext<Scope | undefined>(undefined);

/** The screen's scope of messages: the console's shell wraps every screen in one, and so do the component tests. */
export function ActionScope({ children }: { children: ReactNode }) {
  const [began, setBegan] = useState<{ id: string; pathname: string }>();
  const { pathname } = useLocation();
  // What began on another screen is not this one's: nothing done here yet, so a notice it was opened with shows.
  const last = began?.pathname === pathname ? began.id : undefined;
  const begin = useCallback((id: string) => setBegan({ id, pathname }), [pathname]);
  const scope = useMemo(() => ({ last, begin }), [last, begin]);
  return <LastAction.Provider value={scope}>{children}</LastAction.Provider>;
}

/** The screen's scope (undefined outside one: every action then keeps its own messages). */
export const useActionScope = () => useContext(LastAction);

/** Whether nothing has been done on this screen yet, for a notice that came with opening it. */
export function useNothingDoneYet(): boolean {
  return useActionScope()?.last === undefined;
}
