import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** What the test provider says of a person: the claims of its ID token. */
export interface TestPerson {
  preferred_username: string;
  email: string;
  /** Left out as some providers (Entra ID) leave it out. */
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

/**
 * A real OpenID provider (oidc-provider) on a loopback port, with one confidential client for the platform. People are
 * whatever the test puts in `people`, by subject; its development login form takes the subject as the login and
 * grants every scope at once, so a sign-in is one form submit.
 */
export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  people: Map<string, TestPerson>;
  /** Registers the platform's redirect URIs (known once it runs) and starts answering. */
  register(platformUrl: string): void;
  stop(): Promise<void>;
}

export async function startTestProvider(): Promise<TestProvider> {
  let handler: http.RequestListener | undefined;
  const server = http.createServer((req, res) => {
    if (handler) return handler(req, res);
    res.statusCode = 503;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const people = new Map<string, TestPerson>();
  const clientId = 'platform-console';
  const clientSecret = 'test-client-secret-0123456789abcdef';
  return {
    issuer,
    clientId,
    clientSecret,
    people,
    register(platformUrl: string) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [`${platformUrl}api/v1/user/oidc/callback`],
            post_logout_redirect_uris: [platformUrl],
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        pkce: { required: () => true },
        scopes: ['openid', 'email', 'profile', 'groups'],
        claims: {
          openid: ['sub'],
          email: ['email', 'email_verified'],
          profile: ['preferred_username', 'name'],
          groups: ['groups'],
        },
        // The claims in the ID token itself, as Keycloak and Dex put them.
        conformIdTokenClaims: false,
        features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
        cookies: { keys: ['test-provider-cookie-key'] },
        async findAccount(_ctx, sub) {
          const person = people.get(sub);
          if (!person) return undefined;
          return { accountId: sub, claims: async () => ({ sub, ...people.get(sub)! }) };
        },
        // No consent screen: the client is the site's own.
        async loadExistingGrant(ctx) {
          const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
          grant.addOIDCScope('openid email profile groups');
          await grant.save();
          return grant;
        },
      });
      handler = provider.callback();
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A browser's cookies, per host, as fetch does not keep them. */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  header(url: URL): string {
    return [...(this.byHost.get(url.host) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  take(url: URL, res: Response): void {
    const jar = this.byHost.get(url.host) ?? new Map<string, string>();
    this.byHost.set(url.host, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const gone = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || /expires=Thu, 01 Jan 1970/i.test(line) || value === '';
      if (gone) jar.delete(name);
      else jar.set(name, value);
    }
  }

  get(host: string, name: string): string | undefined {
    return this.byHost.get(host)?.get(name);
  }
}

/** Follows redirects as a browser would, keeping cookies; answers the last response and its URL. */
export async function browse(jar: CookieJar, start: string, init: RequestInit = {}): Promise<{ res: Response; url: URL; body: string }> {
  let url = new URL(start);
  let req: RequestInit = init;
  for (let hops = 0; hops < 20; hops++) {
    const headers = new Headers(req.headers);
    const cookie = jar.header(url);
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(url, { ...req, headers, redirect: 'manual' });
    jar.take(url, res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url);
      req = {};
      await res.arrayBuffer();
      continue;
    }
    return { res, url, body: await res.text() };
  }
  throw new Error(`too many redirects from ${start}`);
}

/** Signs `subject` in at the provider's development login form the browse ended on, and follows on. */
export async function submitLogin(jar: CookieJar, page: { url: URL; body: string }, subject: string) {
  const action = /<form[^>]*action="([^"]+)"/.exec(page.body)?.[1];
  if (!action) throw new Error(`no login form at ${page.url.href}: ${page.body.slice(0, 300)}`);
  const form = new URLSearchParams({ prompt: 'login', login: subject, password: 'any' });
  return browse(jar, new URL(action, page.url).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
}
