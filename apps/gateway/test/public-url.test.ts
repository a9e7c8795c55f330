import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pageHeaders } from '../src/paging';
import type { EdgeContext } from '../src/route';
import { startTestGateway, type TestGateway } from './test-gateway';

// Every absolute link the gateway hands out is built on PUBLIC_URL. A client chooses the Host header (and, through a
// proxy it may reach, X-Forwarded-Host): were links built on them, a crafted request would have the identity provider
// deliver a person's sign-in code to another host.
const PUBLIC = 'https://platform.example.com/';
const SPOOFED = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' };

/** A GET with headers fetch may not send (Host among them). */
function get(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; location?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(base);
    const req = http.request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The provider's discovery document, enough for the flow's start and the logout link. */
async function startProviderMetadata(): Promise<{ issuer: string; close(): void }> {
  const server = http.createServer((req, res) => {
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.url !== '/.well-known/openid-configuration') return res.writeHead(404).end();
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        end_session_endpoint: `${issuer}/session/end`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

describe('links are built on the configured public URL, never on the request', () => {
  let provider: Awaited<ReturnType<typeof startProviderMetadata>>;
  let gw: TestGateway;
  beforeAll(async () => {
    provider = await startProviderMetadata();
    gw = await startTestGateway({
      PUBLIC_URL: PUBLIC,
      // The test client is a proxy the gateway believes: even then X-Forwarded-Host makes no link.
      TRUST_PROXY: 'loopback',
      OIDC_ISSUER_URL: provider.issuer,
      OIDC_CLIENT_ID: 'platform',
      OIDC_CLIENT_SECRET: 'a-client-secret-for-the-test',
    });
  });
  afterAll(() => {
    gw?.close();
    provider?.close();
  });

  it('sends the provider the public redirect URI, whatever host the request names', async () => {
    const start = await get(gw.base, '/api/v1/user/oidc/start', SPOOFED);
    expect(start.status).toBe(302);
    const toProvider = new URL(start.location!);
    expect(toProvider.origin).toBe(provider.issuer);
    expect(toProvider.searchParams.get('redirect_uri')).toBe(`${PUBLIC}api/v1/user/oidc/callback`);
  });

  it('lands a sign-out on the public URL', async () => {
    const methods = await get(gw.base, '/api/v1/sign-in/methods', SPOOFED);
    expect(methods.status).toBe(200);
    const logout = new URL(JSON.parse(methods.body).oidc.logout_url);
    expect(logout.searchParams.get('post_logout_redirect_uri')).toBe(PUBLIC);
  });

  it('names the API document on the public URL in error bodies', async () => {
    for (const path of ['/api/v1/user', '/api/v1/no-such-route']) {
      const refused = await get(gw.base, path, SPOOFED);
      expect([401, 404]).toContain(refused.status);
      expect(JSON.parse(refused.body).url).toBe(`${PUBLIC}api/v1/openapi.json`);
    }
  });

  it('builds paging links on the public URL, even for a path that reads as another host', () => {
    const links = (originalUrl: string) =>
      pageHeaders({ req: { originalUrl }, config: { PUBLIC_URL: PUBLIC } } as unknown as EdgeContext, { page: 1, limit: 2 }, 5).link;
    expect(links('/api/v1/orgs?limit=2')).toContain(`<${PUBLIC}api/v1/orgs?limit=2&page=2>; rel="next"`);
    // A path beginning with two slashes would read as a host of its own.
    expect(new URL(links('//evil.example/api/v1/orgs').split('>')[0].slice(1)).origin).toBe(PUBLIC.slice(0, -1));
  });
});

describe('without PUBLIC_URL', () => {
  it('links to this machine at HTTP_PORT, as Gitea defaults ROOT_URL', async () => {
    const gw = await startTestGateway({ HTTP_PORT: '8080' });
    try {
      const refused = await get(gw.base, '/api/v1/user', SPOOFED);
      expect(JSON.parse(refused.body).url).toBe('http://localhost:8080/api/v1/openapi.json');
    } finally {
      gw.close();
    }
  });
});
