import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, ok, presentToken, type Schema } from './api/client';

/** Who is signed in, kept in sessionStorage only: closing the tab forgets the token. */
interface Stored {
  token: string;
  /** Set when the console minted the token at sign-in: signing out deletes it. A pasted token is only forgotten. */
  minted: boolean;
}

export interface Session {
  user: Schema<'User'>;
  minted: boolean;
}

interface SessionApi {
  session: Session | undefined;
  /** True while a stored token is being checked at start. */
  restoring: boolean;
  signInWithPassword(username: string, password: string): Promise<void>;
  signInWithToken(token: string): Promise<void>;
  signOut(): Promise<void>;
}

const KEY = 'platform.console.session';
const SessionContext = createContext<SessionApi | undefined>(undefined);

const basic = (username: string, password: string) =>
  `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${username}:${password}`)))}`;

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session>();
  const [restoring, setRestoring] = useState(() => sessionStorage.getItem(KEY) !== null);

  const forget = useCallback(() => {
    sessionStorage.removeItem(KEY);
    presentToken(undefined);
    setSession(undefined);
  }, []);

  const adopt = useCallback(
    async (stored: Stored) => {
      presentToken(stored.token);
      try {
        const user = await ok(api.GET('/user'));
        sessionStorage.setItem(KEY, JSON.stringify(stored));
        presentToken(stored.token, forget);
        setSession({ user, minted: stored.minted });
      } catch (err) {
        presentToken(undefined);
        throw err;
      }
    },
    [forget],
  );

  useEffect(() => {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return;
    const stored = JSON.parse(raw) as Stored;
    presentToken(stored.token);
    ok(api.GET('/user')).then(
      (user) => {
        presentToken(stored.token, forget);
        setSession({ user, minted: stored.minted });
        setRestoring(false);
      },
      () => {
        forget();
        setRestoring(false);
      },
    );
  }, [forget]);

  const value = useMemo<SessionApi>(
    () => ({
      session,
      restoring,
      async signInWithPassword(username, password) {
        const created = await ok(
          api.POST('/users/{username}/tokens', {
            params: { path: { username } },
            headers: { authorization: basic(username, password) },
            body: { name: `console ${new Date().toISOString()}` },
          }),
        );
        await adopt({ token: created.sha1, minted: true });
      },
      async signInWithToken(token) {
        await adopt({ token: token.trim(), minted: false });
      },
      async signOut() {
        // The token this console minted dies with the session; a pasted one belongs to its owner and stays.
        if (session?.minted) await api.DELETE('/user/token').catch(() => undefined);
        forget();
      },
    }),
    [session, restoring, adopt, forget],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}

/** The signed-in user; screens behind the sign-in gate only. */
export function useUser(): Schema<'User'> {
  const { session } = useSession();
  if (!session) throw new Error('no session');
  return session.user;
}
