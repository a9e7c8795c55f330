import { isIPv6 } from 'node:net';
import type { ApiRequest as Request } from './api-request';
import { InputError, NotAllowedError, NotAuthenticatedError, NotFoundError, quote } from '@platform/errors';
import type { orgsTeamsV1 } from '@platform/proto';
import { TEXT_LIMITS } from '@platform/service-kit';
import type { Backends } from './backends';
import type { GatewayConfig } from './config';
import type { Auth, OrgMode, OrgRef, TokenScope } from './route';
import { assertCsrfProof, rememberSession, sessionSecretOf } from './session-cookie';
import type { SignInFailures } from './sign-in-failures';


/** The token a request presents: `Authorization: token|bearer <t>`, else `?token=` or `?access_token=`. */
export function presentedToken(req: Request): string | undefined {
  const header = req.get('authorization');
  if (header) {
    const m = /^(?:token|bearer)\s+(\S+)$/i.exec(header);
    if (m) return m[1];
    return undefined;
  }
  for (const key of ['token', 'access_token']) {
    const v = req.query[key];
    if (typeof v === 'string' && v) return v;
  }
  return undefined;
}

/** A JWT (three base64url parts): a Kubernetes ServiceAccount token, which orgs-teams may accept for a service account. */
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** The longest JWT looked at; the platform's own tokens are never longer than TEXT_LIMITS.token. */
const MAX_JWT = 8192;

/**
 * The bytes of canonical base64 (RFC 4648 section 4, padded, no other characters), else undefined. Node's decoder
 * skips what is not base64 and stops at the first `=`, so one credential would have many spellings, trailing junk
 * included: only the one spelling that encodes back to itself is taken.
 */
function strictBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** The text of UTF-8 bytes, or undefined when they are not UTF-8. */
function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Whether the request presents HTTP Basic credentials (its Authorization names the Basic scheme, however spelt). */
const presentsBasic = (req: Request) => /^basic(?:\s|$)/i.test(req.get('authorization') ?? '');

/** HTTP Basic credentials, when the request carries them: canonical base64 of UTF-8 `user:password`, else 401. */
function basicCredentials(req: Request): { username: string; password: string } | undefined {
  if (!presentsBasic(req)) return undefined;
  const m = /^basic\s+(\S+)$/i.exec(req.get('authorization') ?? '');
  if (!m) throw new NotAuthenticatedError('malformed basic credentials');
  const bytes = strictBase64(m[1]);
  const decoded = bytes && utf8(bytes);
  const colon = decoded?.indexOf(':') ?? -1;
  if (!decoded || colon < 0 || decoded.includes('\u0000')) throw new NotAuthenticatedError('malformed basic credentials');
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The limits of failed Basic-auth attempts per client address, as configured. */
export function addressFailureLimits(config: GatewayConfig): { max: number; windowSeconds: number } {
  return { max: config.LOGIN_MAX_FAILURES_PER_ADDRESS, windowSeconds: config.LOGIN_FAILURE_WINDOW_SECONDS };
}

/**
 * The key a client address is counted under: an IPv4 address (also IPv4-mapped IPv6) as it is, an IPv6
 * address by its /64, since one client usually holds a whole /64.
 */
export function addressKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!isIPv6(ip)) return ip;
  const [head, tail = ''] = ip.split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** Who a request comes from, the one use its token is limited to (if any), and the token's Gitea scopes. */
export interface Authenticated {
  user: orgsTeamsV1.User;
  scope: TokenScope | undefined;
  /** The token's Gitea scopes; undefined for Basic credentials, which scopes do not limit. */
  accessScopes: string[] | undefined;
}

/**
 * Who is calling, per the route's auth mode. A missing token on a token route, and any
 * bad, revoked or refused credential on any route, is 401. HTTP Basic credentials are taken on the Basic rows and,
 * as Gitea takes them, on every row that takes a token (public rows included), always by the one password path below.
 */
export async function authenticate(
  auth: Auth,
  req: Request,
  backends: Backends,
  addressFailures: SignInFailures,
): Promise<Authenticated | undefined> {
  if (auth === 'basic' || presentsBasic(req)) return authenticatePassword(req, backends, addressFailures);
  const token = presentedToken(req);
  // The console's session cookie stands in for a token when the request presents none (docs/authentication.md).
  if (!token && !req.get('authorization')) {
    const session = await authenticateSession(auth, req, backends);
    if (session) return session;
  }
  if (!token) {
    if (auth === 'token') throw new NotAuthenticatedError('token is required');
    if (req.get('authorization')) throw new NotAuthenticatedError('unsupported authorization scheme');
    return undefined;
  }
  if (token.length > (JWT.test(token) ? MAX_JWT : TEXT_LIMITS.token)) throw new NotAuthenticatedError('invalid token');
  // Who the token belongs to is kept by orgs-teams' read model (@platform/orgs-teams-client).
  const answer = await backends.orgsTeams.identity.authenticate({ token });
  if (!answer.user) return undefined;
  const scope = answer.scope ? { name: answer.scope, accountId: answer.scopeAccountId } : undefined;
  // An answer without scopes comes from an orgs-teams older than scopes: its tokens could do everything.
  const accessScopes = answer.accessScopes.length ? answer.accessScopes : ['all'];
  return { user: answer.user, scope, accessScopes };
}

/**
 * HTTP Basic credentials (login or email, password, and the second factor's code in `X-Gitea-OTP`): the one way the
 * API checks a password, on every row that takes it. Every attempt from a client address with too many failures in
 * the window is refused with 429 and Retry-After before orgs-teams is asked, so no password is hashed for it; orgs-teams
 * then applies the account's own limit (before its password is hashed too), the second factor, and the account's rules
 * (inactive 401, prohibited from logging in 403, an address not yet verified where the site lists allowed domains
 * 403). A Basic sign-in is not limited by token scopes (it is the owner's password), but a caller who must change its
 * password or enrol a second factor first is held to those routes by the edge as a token's would be.
 */
async function authenticatePassword(req: Request, backends: Backends, addressFailures: SignInFailures): Promise<Authenticated | undefined> {
  // req.ip is the peer, or the client named in X-Forwarded-For only when TRUST_PROXY says whom to believe.
  const address = addressKey(req.ip);
  // The attempt holds its place against the address's limit while orgs-teams checks it, so however many arrive at
  // once no more than the limit are checked; only wrong credentials keep the place as a failure.
  const attempt = await addressFailures.reserve(address, 'too many failed sign-in attempts from this address');
  try {
    const creds = basicCredentials(req);
    if (!creds) throw new NotAuthenticatedError('basic authentication is required');
    // The access line names the login tried, so a refused sign-in shows who was tried from where (never the password).
    req.res!.locals.login = creds.username.slice(0, 256);
    try {
      // A second factor travels beside the password as Gitea's clients send it (docs/authentication.md).
      const { user } = await backends.orgsTeams.identity.authenticateBasic({ ...creds, otp: (req.get('x-gitea-otp') ?? '').slice(0, 64) });
      return user ? { user, scope: undefined, accessScopes: undefined } : undefined;
    } catch (err) {
      if (err instanceof NotAuthenticatedError) await attempt.fail();
      throw err;
    }
  } finally {
    await attempt.release();
  }
}

/**
 * Who the session cookie signs in, if the request carries one. A session ended, expired or refused is 401 on token
 * rows and no caller on public ones (a browser may keep a dead cookie; the sign-in screen's own calls must work). A
 * state-changing request it signs in must carry the CSRF proof (403 otherwise). Sessions are not cached: each request
 * asks orgs-teams, so an ended session is refused by every gateway on the very next request.
 */
async function authenticateSession(auth: Auth, req: Request, backends: Backends): Promise<Authenticated | undefined> {
  const secret = sessionSecretOf(req);
  if (secret === undefined) return undefined;
  let answer: orgsTeamsV1.AuthenticateSessionResponse;
  try {
    if (!secret) throw new NotAuthenticatedError('invalid session');
    answer = await backends.orgsTeams.identity.authenticateSession({ secret });
  } catch (err) {
    if (err instanceof NotAuthenticatedError && auth === 'public') return undefined;
    throw err;
  }
  if (!answer.user || !answer.session) return undefined;
  assertCsrfProof(req, secret);
  rememberSession(req, answer.session);
  return { user: answer.user, scope: undefined, accessScopes: undefined };
}

/**
 * The `org` query context, resolved once per request as the caller may see it. A caller acts for an organization
 * it can see (then the row's requirements on it decide); one it cannot act for — none by that name, or a private
 * one it is not a member of — is 403 with the same message for both, so the answer never tells whether it exists.
 * Site admins see every organization: for them an unknown name is simply 404. A name longer than any login names
 * nothing, so it is unknown without asking orgs-teams.
 */
export async function resolveOrg(
  mode: OrgMode,
  req: Request,
  backends: Backends,
  caller: Pick<orgsTeamsV1.User, 'id' | 'isAdmin'> | undefined,
): Promise<OrgRef | undefined> {
  const raw = req.query.org;
  if (raw === undefined || raw === '') {
    if (mode === 'required') throw new InputError('the org query parameter is required', [{ field: 'query.org', description: 'required' }]);
    return undefined;
  }
  if (typeof raw !== 'string')
    throw new InputError('org must be a single organization name', [{ field: 'query.org', description: 'must be a string' }]);
  const unknown = (notFound: string) =>
    caller?.isAdmin ? new NotFoundError(notFound) : new NotAllowedError(`you cannot act for organization ${quote(raw)}`);
  if (raw.length > TEXT_LIMITS.login) throw unknown(`organization ${quote(raw)} does not exist`);
  try {
    const org = await backends.orgsTeams.organizations.getOrg({ name: raw, viewerId: caller?.id ?? 0 });
    return { id: org.id, name: org.username, type: 'organization' };
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    if (mode !== 'account') throw unknown(err.message);
    // The `account` mode (site-admin contract rows): the slug may be a user's own account.
    const user = await backends.orgsTeams.identity.getUser({ id: 0, login: raw }).catch((e: unknown) => {
      throw e instanceof NotFoundError ? unknown(`no organization or user account named ${raw}`) : e;
    });
    return { id: user.id, name: user.login, type: 'user' };
  }
}
