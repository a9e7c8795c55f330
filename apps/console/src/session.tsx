import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, ApiError, ok, presentToken, type Schema } from './api/client';

/**
 * Who is signed in. A password sign-in starts a session on the server, kept in an HttpOnly cookie the browser sends
 * and this code never sees (docs/authentication.md, "Console sessions"); what the console keeps is the session's CSRF
 * token, in memory only, sent as X-CSRF-Token with every change. A pasted access token is kept in sessionStorage only
 * (closing the tab forgets it), as before.
 */
interface Stored {
  token: string;
  /** Set when an earlier console minted the token at sign-in: signing out deletes it. A pasted token is only forgotten. */
  minted: boolean;
}

export interface Session {
  user: Schema<'User'>;
  /** `cookie`: a password sign-in (a server-side session); `token`: a pasted access token. */
  kind: 'cookie' | 'token';
  minted: boolean;
}

interface SessionApi {
  session: Session | undefined;
  /** True while the start asks whether a session or a stored token is still good. */
  restoring: boolean;
  /** `otp`: the second factor's code (or a recovery code) of an account that has one. */
  signInWithPassword(username: string, password: string, otp?: string): Promise<void>;
  signInWithToken(token: string): Promise<void>;
  /** Answers whether it signed in: where the site lists allowed domains a new account signs in once its address is verified. */
  signUp(fields: { username: string; email: string; password: string }): Promise<boolean>;
  signOut(): Promise<void>;
  /** True from a sign-out here until the next sign-in: the sign-in screen then offers the provider's sign-out as well. */
  signedOut: boolean;
  /** Forgets the session here without asking the server (the session was ended, e.g. revoked on the account page). */
  ended(): void;
}

const KEY = 'platform.console.session';
const SessionContext = createContext<SessionApi | undefined>(undefined);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session's CSRF token, and what to do when the server no longer knows the session. */
let csrfToken: string | undefined;
let onSessionEnded: (() => void) | undefined;

// The cookie rides along by itself (same origin); every change signed in by it carries the CSRF token. A 401 to a
// request made with the cookie alone means the session ended (signed out elsewhere, revoked, expired).
api.use({
  onRequest({ request }) {
    if (csrfToken && !SAFE_METHODS.has(request.method) && !request.headers.has('authorization')) request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && csrfToken && !request.headers.has('authorization')) onSessionEnded?.();
    return response;
  },
});

export const basicAuthorization = (username: string, password: string) =>
  `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${username}:${password}`)))}`;

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session>();
  const [restoring, setRestoring] = useState(true);
  const [signedOut, setSignedOut] = useState(false);

  const forget = useCallback(() => {
    sessionStorage.removeItem(KEY);
    presentToken(undefined);
    csrfToken = undefined;
    onSessionEnded = undefined;
    setSession(undefined);
  }, []);

  const adoptCookie = useCallback(
    (signedIn: Schema<'SignedIn'>) => {
      csrfToken = signedIn.csrf_token;
      onSessionEnded = forget;
      setSignedOut(false);
      setSession({ user: signedIn.user, kind: 'cookie', minted: false });
    },
    [forget],
  );

  const adoptToken = useCallback(
    async (stored: Stored) => {
      presentToken(stored.token);
      try {
        const user = await ok(api.GET('/user'));
        sessionStorage.setItem(KEY, JSON.stringify(stored));
        presentToken(stored.token, forget);
        setSignedOut(false);
        setSession({ user, kind: 'token', minted: stored.minted });
      } catch (err) {
        presentToken(undefined);
        throw err;
      }
    },
    [forget],
  );

  useEffect(() => {
    const raw = sessionStorage.getItem(KEY);
    if (raw) {
      const stored = JSON.parse(raw) as Stored;
      presentToken(stored.token);
      ok(api.GET('/user'))
        .then(
          (user) => {
            presentToken(stored.token, forget);
            setSession({ user, kind: 'token', minted: stored.minted });
          },
          forget,
        )
        .finally(() => setRestoring(false));
      return;
    }
    // A session cookie from an earlier visit: the server answers its CSRF token (404 or 401: none, or ended).
    ok(api.GET('/user/session'))
      .then(adoptCookie, () => undefined)
      .finally(() => setRestoring(false));
  }, [adoptCookie, forget]);

  const value = useMemo<SessionApi>(
    () => ({
      session,
      restoring,
      async signInWithPassword(username, password, otp) {
        const headers: Record<string, string> = { authorization: basicAuthorization(username, password) };
        if (otp) headers['x-gitea-otp'] = otp;
        adoptCookie(await ok(api.POST('/user/session', { headers })));
      },
      async signInWithToken(token) {
        await adoptToken({ token: token.trim(), minted: false });
      },
      async signUp(fields) {
        const made = await ok(api.POST('/user/signup', { body: fields }));
        if (!made.session || !made.csrf_token) return false;
        adoptCookie({ ...made, session: made.session, csrf_token: made.csrf_token });
        return true;
      },
      async signOut() {
        if (session?.kind === 'cookie') {
          // Already ended on the server (401) is signed out too.
          await ok(api.DELETE('/user/session')).catch((err: unknown) => {
            if (!(err instanceof ApiError) || err.status !== 401) throw err;
          });
        } else if (session?.minted) await api.DELETE('/user/token').catch(() => undefined);
        forget();
        setSignedOut(true);
      },
      signedOut,
      ended: forget,
    }),
    [session, restoring, signedOut, adoptCookie, adoptToken, forget],
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
