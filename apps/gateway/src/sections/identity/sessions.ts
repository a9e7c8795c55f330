import { z } from 'zod';
import { NotAllowedError, NotFoundError } from '@platform/errors';
import type { orgsTeamsV1 } from '@platform/proto';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import type { ApiRequest as Request } from '../../api-request';
import { addressKey } from '../../authentication';
import * as p from '../../params';
import { sectionRoutes } from '../../route';
import { clearedSessionCookie, csrfTokenOf, currentSession, sessionCookie, sessionSecretOf } from '../../session-cookie';
import { UserJson, userJson } from './presenters';

const route = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });

// The web console's sessions and self-registration (docs/authentication.md, "Console sessions"; docs/site-settings.md).
// A session is a cookie the browser keeps and page scripts never see; API clients keep using tokens.

const iso = (unix: number) => new Date(unix * 1000).toISOString();

export const SessionJson = z
  .object({
    id: z.number().int(),
    user_agent: z.string(),
    address: z.string(),
    created_at: z.string(),
    last_used_at: z.string(),
    expires_at: z.string().meta({ description: 'When it ends unless used before (idle timeout), at the latest its maximum lifetime' }),
    current: z.boolean().meta({ description: 'Whether this request was signed in by it' }),
  })
  .meta({ id: 'Session' });

const SignedInJson = z
  .object({
    user: UserJson,
    session: SessionJson,
    csrf_token: z.string().meta({
      description: 'Send it as X-CSRF-Token with every request that changes something and is signed in by the session cookie',
    }),
  })
  .meta({ id: 'SignedIn' });

function sessionJson(s: orgsTeamsV1.SessionInfo, current: number | undefined): z.input<typeof SessionJson> {
  return {
    id: s.id,
    user_agent: s.userAgent,
    address: s.address,
    created_at: iso(s.createdUnix),
    last_used_at: iso(s.lastUsedUnix),
    expires_at: iso(s.expiresUnix),
    current: s.id === current,
  };
}

/** The client a session is shown with: its User-Agent and address (req.ip: the peer, or the client TRUST_PROXY vouches for). */
const clientOf = (req: Request) => ({ userAgent: (req.get('user-agent') ?? '').slice(0, 512), address: (req.ip ?? '').slice(0, 64) });

/** The answer of a sign-in or sign-up: the user, the session, its CSRF token, and the cookie. */
function signedIn(req: Request, created: orgsTeamsV1.CreatedSession) {
  const session = created.session!;
  return {
    headers: { 'Set-Cookie': sessionCookie(req, created.secret, session.maxExpiresUnix), 'Cache-Control': 'no-store' },
    body: { user: userJson(created.user!), session: sessionJson(session, session.id), csrf_token: csrfTokenOf(created.secret) },
  };
}

const SignedUpJson = z
  .object({
    user: UserJson,
    session: SessionJson.nullable().meta({
      description: 'null when the site lists allowed domains: the account signs in once its address is verified (the link mailed to it)',
    }),
    csrf_token: z.string().nullable(),
  })
  .meta({ id: 'SignedUp' });

const SignUpOption = z.object({
  username: z.string().min(1).max(L.login),
  email: z.string().min(1).max(L.email),
  password: z.string().min(1).max(L.password),
  full_name: z.string().max(L.fullName).optional(),
});

export const sessionRoutes = [
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/session',
    summary:
      'Sign in to the console (HTTP Basic auth, failed attempts counted as on the token routes): starts a session, set as an HttpOnly cookie',
    auth: 'basic',
    response: {
      status: 201,
      schema: SignedInJson,
      headers: { 'Set-Cookie': 'The session cookie (HttpOnly, SameSite=Strict, Path=/api/v1)' },
    },
    errors: [{ status: 403, description: 'when password sign-in is kept for the break-glass account and this is another' }],
    async handle(_input, { backends, caller, config, req }) {
      const onlyFor = config.PASSWORD_SIGN_IN_ONLY_FOR;
      // Single sign-on is the way in; the named account keeps its password for when the provider is down.
      if (onlyFor && onlyFor.toLowerCase() !== caller.login.toLowerCase())
        throw new NotAllowedError('password sign-in is turned off on this site: sign in through the identity provider');
      const created = await backends.orgsTeams.identity.createSession({ userId: caller.id, ...clientOf(req) });
      return signedIn(req, created);
    },
  }),
  route({
    method: 'get',
    scope: 'read:user',
    path: '/user/session',
    summary: 'The session this request is signed in by, with its CSRF token (the console reads it after a reload)',
    auth: 'token',
    response: { status: 200, schema: SignedInJson },
    errors: [{ status: 404, description: 'when the request is signed in by a token, not a session' }],
    async handle(_input, { caller, req }) {
      const session = currentSession(req);
      const secret = sessionSecretOf(req);
      if (!session || !secret) throw new NotFoundError('this request is not signed in by a session');
      return {
        headers: { 'Cache-Control': 'no-store' },
        body: { user: userJson(caller), session: sessionJson(session, session.id), csrf_token: csrfTokenOf(secret) },
      };
    },
  }),
  route({
    method: 'delete',
    scope: 'write:user',
    path: '/user/session',
    summary: 'Sign out of the console: ends the session this request is signed in by and clears its cookie',
    auth: 'token',
    response: { status: 204 },
    errors: [{ status: 404, description: 'when the request is signed in by a token (DELETE /user/token signs a token out)' }],
    async handle(_input, { backends, caller, req }) {
      const session = currentSession(req);
      if (!session) throw new NotFoundError('this request is not signed in by a session; DELETE /user/token signs a token out');
      await backends.orgsTeams.identity.deleteSession({ userId: caller.id, id: session.id });
      return { headers: { 'Set-Cookie': clearedSessionCookie(req) } };
    },
  }),
  route({
    method: 'get',
    scope: 'read:user',
    path: '/user/sessions',
    summary: "The caller's live console sessions, most recently used first: client, address, last use; `current` marks this one",
    auth: 'token',
    response: { status: 200, schema: z.array(SessionJson) },
    async handle(_input, { kept, caller, req }) {
      const { sessions } = await kept.orgsTeams.identity.listSessions({ userId: caller.id });
      const current = currentSession(req)?.id;
      return { body: sessions.map((s) => sessionJson(s, current)) };
    },
  }),
  route({
    method: 'delete',
    scope: 'write:user',
    path: '/user/sessions/:id',
    summary: "End one of the caller's console sessions (signs that browser out on its next request)",
    auth: 'token',
    params: z.object({ id: p.id }),
    response: { status: 204 },
    errors: [{ status: 404, description: 'when the caller has no live session of that id' }],
    async handle({ params }, { backends, caller, req }) {
      await backends.orgsTeams.identity.deleteSession({ userId: caller.id, id: params.id });
      // Ending the session this request came with signs this browser out too.
      return currentSession(req)?.id === params.id ? { headers: { 'Set-Cookie': clearedSessionCookie(req) } } : {};
    },
  }),
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/signup',
    summary:
      'Create an account (while registration is enabled; the email in an allowed domain when the site lists any), mail it a link verifying its address, and sign in to the console (where the site lists allowed domains, only once the address is verified)',
    auth: 'public',
    body: { schema: SignUpOption },
    response: {
      status: 201,
      schema: SignedUpJson,
      headers: { 'Set-Cookie': 'The session cookie (HttpOnly, SameSite=Strict, Path=/api/v1), unless `session` is null' },
    },
    errors: [
      { status: 403, description: 'when registration is disabled, or the email is outside the allowed domains' },
      { status: 409, description: 'when the username or email is taken' },
      { status: 429, description: 'after too many sign-ups from this address' },
    ],
    async handle({ body }, { backends, req }) {
      const { session, user } = await backends.orgsTeams.identity.signUp({
        username: body.username,
        email: body.email,
        password: body.password,
        fullName: body.full_name ?? '',
        ...clientOf(req),
        // Counted as sign-in failures are: an IPv6 client by its /64.
        address: addressKey(req.ip),
      });
      if (!session) return { headers: { 'Cache-Control': 'no-store' }, body: { user: userJson(user!), session: null, csrf_token: null } };
      return signedIn(req, session);
    },
  }),
];
