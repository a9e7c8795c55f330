import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ApiRequest as Request } from './api-request';
import { NotAllowedError } from '@platform/errors';
import type { orgsTeamsV1 } from '@platform/proto';

/**
 * The console's session cookie and its CSRF proof (docs/authentication.md, "Console sessions"). The cookie is the
 * session's secret, HttpOnly (page scripts never see it), SameSite=Strict, on /api/v1 only, Secure when the request
 * came over https. A request it authenticates that changes something must also carry `X-CSRF-Token`: an HMAC of the
 * secret that only the console was told (in the sign-in answer and GET /user/session), never set as a cookie, so a
 * page of another site can neither send it nor read it.
 */
export const SESSION_COOKIE = 'platform_session';
export const CSRF_HEADER = 'X-CSRF-Token';

/** A session secret: 32 random bytes in base64url (orgs-teams makes them). Anything else names no session. */
const SECRET = /^[A-Za-z0-9_-]{43}$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session secret the request's cookie carries, if it carries one of the right shape. */
export function sessionSecretOf(req: Request): string | undefined {
  const header = req.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    return SECRET.test(value) ? value : '';
  }
  return undefined;
}

/** The CSRF token of a session: derived from its secret, so the gateway checks it without storing anything. */
export function csrfTokenOf(secret: string): string {
  return createHmac('sha256', secret).update('platform console csrf').digest('base64url');
}

/** 403 for a state-changing request authenticated by the cookie without the session's CSRF token. */
export function assertCsrfProof(req: Request, secret: string): void {
  if (SAFE_METHODS.has(req.method)) return;
  const presented = Buffer.from(req.get(CSRF_HEADER) ?? '');
  const expected = Buffer.from(csrfTokenOf(secret));
  if (presented.length === expected.length && timingSafeEqual(presented, expected)) return;
  throw new NotAllowedError(
    `a request signed in by the session cookie that changes something must carry the session's ${CSRF_HEADER} header`,
  );
}

/** Set-Cookie of a new session, living as long as the session may. */
export function sessionCookie(req: Request, secret: string, expiresUnix: number): string {
  const maxAge = Math.max(0, expiresUnix - Math.floor(Date.now() / 1000));
  return `${SESSION_COOKIE}=${secret}; ${attributes(req)}; Max-Age=${maxAge}`;
}

/** Set-Cookie that removes the session cookie (sign-out). */
export function clearedSessionCookie(req: Request): string {
  return `${SESSION_COOKIE}=; ${attributes(req)}; Max-Age=0`;
}

// Secure follows how the request came (req.secure honours TRUST_PROXY's X-Forwarded-Proto): over plain http
// (`npm start` on localhost) a Secure cookie would never be sent back by most clients.
const attributes = (req: Request) => `Path=/api/v1; HttpOnly; SameSite=Strict${req.secure ? '; Secure' : ''}`;

/** The session a request was authenticated by (none: a token, Basic, or nobody). */
const current = new WeakMap<Request, orgsTeamsV1.SessionInfo>();

export function rememberSession(req: Request, session: orgsTeamsV1.SessionInfo): void {
  current.set(req, session);
}

export function currentSession(req: Request): orgsTeamsV1.SessionInfo | undefined {
  return current.get(req);
}
