import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type * as oidc from 'openid-client';
import { z } from 'zod';
import { DomainError, NotAllowedError, NotFoundError, UnavailableError } from '@platform/errors';
import { publicLink, publicUrlOf } from '@platform/service-kit';
import type { ApiRequest as Request } from '../../api-request';
import type { GatewayConfig } from '../../config';
import { sectionRoutes } from '../../route';
import { sessionCookie } from '../../session-cookie';

const route = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });

// Single sign-on for the console through the site's OpenID provider (docs/authentication.md, "Single sign-on (OIDC)"):
// the authorization code flow with PKCE, run by openid-client. The gateway validates the ID token; orgs-teams finds or
// makes the account and starts the same console session a password sign-in starts.

/** The cookie keeping state, nonce and PKCE verifier between the start and the callback. */
const FLOW_COOKIE = 'platform_oidc';
/** How long a person may take at the provider. */
const FLOW_SECONDS = 600;

interface Settings {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  scopes: string;
  claims: { username: string; email: string; groups: string };
  name: string;
}

function settingsOf(config: GatewayConfig): Settings | undefined {
  if (!config.OIDC_ISSUER_URL) return undefined;
  const secret = config.OIDC_CLIENT_SECRET_FILE ? readFileSync(config.OIDC_CLIENT_SECRET_FILE, 'utf8').trim() : config.OIDC_CLIENT_SECRET;
  if (!config.OIDC_CLIENT_ID || !secret)
    throw new UnavailableError('single sign-on is misconfigured: OIDC_CLIENT_ID and OIDC_CLIENT_SECRET(_FILE) are needed');
  return {
    issuer: new URL(config.OIDC_ISSUER_URL),
    clientId: config.OIDC_CLIENT_ID,
    clientSecret: secret,
    scopes: config.OIDC_SCOPES,
    claims: { username: config.OIDC_USERNAME_CLAIM, email: config.OIDC_EMAIL_CLAIM, groups: config.OIDC_GROUPS_CLAIM },
    name: config.OIDC_DISPLAY_NAME,
  };
}

/** The OpenID client, loaded on the first single sign-on rather than with the route table. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const openid = () => require('openid-client') as typeof import('openid-client');

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The provider's metadata, read once (a failed read is tried again on the next sign-in). */
const discovered = new Map<string, Promise<oidc.Configuration>>();
function providerOf(s: Settings): Promise<oidc.Configuration> {
  const key = `${s.issuer.href} ${s.clientId}`;
  let found = discovered.get(key);
  if (!found) {
    // Plain http only for a provider on this machine: anywhere else the code and tokens would cross the network bare.
    const insecure = s.issuer.protocol === 'http:' && LOOPBACK.has(s.issuer.hostname);
    found = openid().discovery(
      s.issuer,
      s.clientId,
      s.clientSecret,
      undefined,
      insecure ? { execute: [openid().allowInsecureRequests] } : undefined,
    );
    found.catch(() => discovered.delete(key));
    discovered.set(key, found);
  }
  return found;
}

function required(config: GatewayConfig): Settings {
  const s = settingsOf(config);
  if (!s) throw new NotFoundError('single sign-on is not configured on this site');
  return s;
}

// Both are built on the configured public URL, never on the request's Host: a request sent with `Host: evil.example`
// would otherwise have the provider deliver the person's code (or the signed-in browser) to evil.example.
const redirectUri = (config: GatewayConfig) => config.OIDC_REDIRECT_URL ?? publicLink(publicUrlOf(config), '/api/v1/user/oidc/callback');

/** The console's address: where a finished sign-in or sign-out lands. */
const consoleUrl = (config: GatewayConfig) => publicUrlOf(config);

// The flow cookie is signed with a key derived from the client secret, which every gateway replica shares, so a
// browser cannot be handed state it did not start with (a sibling subdomain could set the cookie, but not sign it).
const flowKey = (s: Settings) => createHmac('sha256', s.clientSecret).update('platform oidc flow cookie').digest();

interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  expires: number;
  /**
   * Set when a signed-in person started linking the provider to their account: their user id. Kept in the signed flow
   * cookie because the session cookie (SameSite=Strict) does not come back with the provider's redirect.
   */
  link?: number;
}

function sealFlow(s: Settings, flow: Flow): string {
  const body = Buffer.from(JSON.stringify(flow)).toString('base64url');
  return `${body}.${createHmac('sha256', flowKey(s)).update(body).digest('base64url')}`;
}

function openFlow(s: Settings, req: Request): Flow | undefined {
  const header = req.get('cookie') ?? '';
  const value = header
    .split(';')
    .map((p) => p.trim())
    .find((p) => p.startsWith(`${FLOW_COOKIE}=`))
    ?.slice(FLOW_COOKIE.length + 1);
  if (!value) return undefined;
  const [body, mac] = value.split('.');
  if (!body || !mac) return undefined;
  const expected = Buffer.from(createHmac('sha256', flowKey(s)).update(body).digest('base64url'));
  const presented = Buffer.from(mac);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
  try {
    const flow = JSON.parse(Buffer.from(body, 'base64url').toString()) as Flow;
    return flow.expires > Date.now() / 1000 ? flow : undefined;
  } catch {
    return undefined;
  }
}

// SameSite=Lax, not Strict: the callback is a top-level navigation coming from the provider's site, which must carry it.
const flowCookie = (req: Request, value: string, maxAge: number) =>
  `${FLOW_COOKIE}=${value}; Path=/api/v1/user/oidc; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${req.secure ? '; Secure' : ''}`;

const escapeHtml = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A refused sign-in as a page a person reads in the browser, with the way back to the console. */
function refusal(req: Request, status: number, message: string) {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in refused</title></head><body><h1>Sign-in refused</h1><p>${escapeHtml(message)}</p><p><a href="/">Back to the console</a></p></body></html>`;
  return {
    status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Set-Cookie': flowCookie(req, '', 0) },
    body: Buffer.from(html) as never,
  };
}

/** A claim as text ('' when absent or not text). */
const text = (v: unknown) => (typeof v === 'string' ? v : '');
/** The group claim: a list of names, or one name. */
const groupsOf = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((g): g is string => typeof g === 'string') : typeof v === 'string' ? [v] : [];

/** Starts the code flow: the provider's authorization URL, and the flow cookie holding what the callback checks. */
async function startFlow(config: GatewayConfig, req: Request, link?: number) {
  const s = required(config);
  const provider = await providerOf(s).catch((err: unknown) => {
    throw new UnavailableError(`the identity provider cannot be reached: ${(err as Error).message}`);
  });
  const flow: Flow = {
    state: openid().randomState(),
    nonce: openid().randomNonce(),
    verifier: openid().randomPKCECodeVerifier(),
    expires: Math.floor(Date.now() / 1000) + FLOW_SECONDS,
    ...(link ? { link } : {}),
  };
  const location = openid().buildAuthorizationUrl(provider, {
    redirect_uri: redirectUri(config),
    scope: s.scopes,
    state: flow.state,
    nonce: flow.nonce,
    code_challenge: await openid().calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    // Linking asks the person to sign in at the provider even when a provider session exists: the account linked is
    // then the one they chose now, not whoever last signed in there in this browser.
    ...(link ? { prompt: 'login' } : {}),
  });
  return {
    status: 302 as const,
    headers: { location: location.href, 'Set-Cookie': flowCookie(req, sealFlow(s, flow), FLOW_SECONDS), 'Cache-Control': 'no-store' },
  };
}

const ExternalIdentityJson = z
  .object({
    issuer: z.string().meta({ description: "The provider's issuer URL" }),
    subject: z.string().meta({ description: "The person's subject at the provider (the ID token's sub)" }),
    created_at: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'ExternalIdentity' });

const SignInMethodsJson = z
  .object({
    password: z.enum(['everyone', 'one-account']).meta({
      description: '`one-account` when the password form is off for all but the break-glass account',
    }),
    oidc: z
      .object({
        name: z.string().meta({ description: 'The provider, as the button names it: "Sign in with <name>"' }),
        start_url: z.string(),
        logout_url: z.string().nullable().meta({ description: "The provider's sign-out page, when it has one" }),
      })
      .nullable(),
  })
  .meta({ id: 'SignInMethods' });

export const oidcRoutes = [
  route({
    method: 'get',
    scope: 'read:misc',
    path: '/sign-in/methods',
    summary: 'How the console may sign in: the password form, and single sign-on through the OpenID provider when configured',
    auth: 'public',
    response: { status: 200, schema: SignInMethodsJson },
    async handle(_input, { config }) {
      const s = settingsOf(config);
      let logoutUrl: string | null = null;
      if (s) {
        // The provider may be down; the console still offers the button, which then tells the person.
        const provider = await providerOf(s).catch(() => undefined);
        if (provider?.serverMetadata().end_session_endpoint)
          logoutUrl = openid().buildEndSessionUrl(provider, { client_id: s.clientId, post_logout_redirect_uri: consoleUrl(config) }).href;
      }
      return {
        body: {
          password: config.PASSWORD_SIGN_IN_ONLY_FOR ? ('one-account' as const) : ('everyone' as const),
          oidc: s ? { name: s.name, start_url: '/api/v1/user/oidc/start', logout_url: logoutUrl } : null,
        },
      };
    },
  }),
  route({
    method: 'get',
    scope: 'read:user',
    path: '/user/oidc/start',
    summary: 'Start single sign-on: redirects the browser to the OpenID provider (authorization code with PKCE)',
    auth: 'public',
    response: { status: 204, also: [{ status: 302, description: 'to the provider' }] },
    errors: [
      { status: 404, description: 'when single sign-on is not configured' },
      { status: 503, description: 'when the provider cannot be reached' },
    ],
    async handle(_input, { config, req }) {
      return startFlow(config, req);
    },
  }),
  route({
    method: 'get',
    scope: 'write:user',
    path: '/user/oidc/link/start',
    summary:
      "Link the signed-in account to the person's account at the OpenID provider: redirects the browser to the provider; back at the callback the provider's subject is linked to this account and the browser goes to the console's account page",
    auth: 'token',
    response: { status: 204, also: [{ status: 302, description: 'to the provider' }] },
    errors: [
      { status: 404, description: 'when single sign-on is not configured' },
      { status: 503, description: 'when the provider cannot be reached' },
    ],
    async handle(_input, { caller, config, req }) {
      if (caller.serviceAccount) throw new NotAllowedError('a service account has no provider account to link');
      return startFlow(config, req, caller.id);
    },
  }),
  route({
    method: 'get',
    scope: 'read:user',
    path: '/user/oidc/links',
    summary: "The accounts at OpenID providers linked to the caller's account (at most one per provider)",
    auth: 'token',
    response: { status: 200, schema: z.array(ExternalIdentityJson) },
    async handle(_input, { kept, caller }) {
      const { identities } = await kept.orgsTeams.identity.listExternalIdentities({ userId: caller.id });
      return {
        body: identities.map((x) => ({ issuer: x.issuer, subject: x.subject, created_at: new Date(x.createdUnix * 1000).toISOString() })),
      };
    },
  }),
  route({
    method: 'delete',
    scope: 'write:user',
    path: '/user/oidc/links',
    summary: "Unlink the caller's account from its account at the provider `issuer`: signing in through that provider no longer reaches it",
    auth: 'token',
    query: z.object({ issuer: z.string().min(1).max(2048) }),
    response: { status: 204 },
    errors: [{ status: 404, description: 'when the account is not linked to that provider' }],
    async handle({ query }, { backends, caller }) {
      await backends.orgsTeams.identity.unlinkExternalIdentity({ userId: caller.id, issuer: query.issuer });
      return {};
    },
  }),
  route({
    method: 'get',
    scope: 'read:user',
    path: '/user/oidc/callback',
    summary:
      "Where the OpenID provider sends the browser back: the code is exchanged and the ID token validated, then the console session starts (the password sign-in's cookie) and the browser goes to the console",
    auth: 'public',
    query: z.object({}).catchall(z.string()),
    response: {
      status: 200,
      contentType: 'text/html',
      description: 'Never on success; a page saying why the sign-in was refused',
      also: [{ status: 302, description: 'to the console, signed in' }],
    },
    errors: [
      { status: 400, description: 'when the flow is unknown or expired, or the provider refused or answered something invalid' },
      {
        status: 403,
        description:
          'when the person may not sign in here (an e-mail the provider has not verified, an account that cannot be linked, registration closed, e-mail outside the allowed domains, account disabled) or a link cannot be made',
      },
      { status: 404, description: 'when single sign-on is not configured' },
    ],
    async handle(_input, { backends, config, req }) {
      const s = required(config);
      const flow = openFlow(s, req);
      if (!flow) return refusal(req, 400, 'This sign-in was not started here or took too long. Start it again from the console.');
      if (typeof req.query.error === 'string')
        return refusal(req, 400, `The identity provider refused: ${text(req.query.error_description) || req.query.error}`);
      let claims: oidc.IDToken;
      let userinfo: Record<string, unknown> = {};
      try {
        const provider = await providerOf(s);
        const current = new URL(redirectUri(config));
        current.search = new URL(req.originalUrl, 'http://x').search;
        const tokens = await openid().authorizationCodeGrant(provider, current, {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims()!;
        // Providers that keep the profile out of the ID token (Entra ID's groups overage aside) answer it at userinfo.
        if (provider.serverMetadata().userinfo_endpoint && (!claims[s.claims.email] || !(s.claims.groups in claims)))
          userinfo = await openid()
            .fetchUserInfo(provider, tokens.access_token, claims.sub)
            .catch(() => ({}));
      } catch (err) {
        return refusal(req, 400, `The identity provider's answer could not be accepted: ${(err as Error).message}`);
      }
      const claim = (name: string) => claims[name] ?? userinfo[name];
      if (flow.link) {
        try {
          await backends.orgsTeams.identity.linkExternalIdentity({ userId: flow.link, issuer: claims.iss, subject: claims.sub });
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          return refusal(req, err.httpStatus >= 500 ? err.httpStatus : 403, err.message);
        }
        return {
          status: 302,
          headers: {
            location: publicLink(consoleUrl(config), '/account?linked=1'),
            'Cache-Control': 'no-store',
            'Set-Cookie': flowCookie(req, '', 0),
          },
        };
      }
      try {
        const { session: created } = await backends.orgsTeams.identity.signInExternal({
          issuer: claims.iss,
          subject: claims.sub,
          username: text(claim(s.claims.username)),
          email: text(claim(s.claims.email)),
          // Only the provider's word that the address is the person's makes it count, or the site's trust in every
          // e-mail this provider sends (OIDC_TRUST_EMAIL, for providers such as Entra ID that send no email_verified).
          emailVerified: claim('email_verified') === true || config.OIDC_TRUST_EMAIL,
          fullName: text(claim('name')),
          groups: groupsOf(claim(s.claims.groups)),
          userAgent: (req.get('user-agent') ?? '').slice(0, 512),
          address: (req.ip ?? '').slice(0, 64),
        });
        return {
          status: 302,
          headers: {
            location: consoleUrl(config),
            'Cache-Control': 'no-store',
            'Set-Cookie': [flowCookie(req, '', 0), sessionCookie(req, created!.secret, created!.session!.maxExpiresUnix)] as never,
          },
        };
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        // A refusal is 403 whatever orgs-teams' kind (a name it could not give is a conflict there); outages stay 5xx.
        return refusal(req, err.httpStatus >= 500 ? err.httpStatus : 403, err.message);
      }
    },
  }),
];
