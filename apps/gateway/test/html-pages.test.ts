import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { InputError } from '@platform/errors';
import { orgsTeamsV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer, type RunningGrpcServer } from '@platform/service-kit';
import { securePages } from '../src/page-headers';
import { startTestGateway, type TestGateway } from './test-gateway';

// Every HTML answer of the gateway carries the console's security headers (page-headers.ts): the console, the status
// page, the API reference, the e-mail verification page, the single sign-on refusal page, a redirect's page; each page
// keeps the policy it needs, and an inline style sheet is allowed by its hash only.

const log = createLogger('html-pages-test', 'silent');

/** The console's headers, with a Content-Security-Policy that frames nothing and allows no inline script. */
function expectPageHeaders(res: Response, what: string) {
  const headers = {
    what,
    type: res.headers.get('content-type'),
    nosniff: res.headers.get('x-content-type-options'),
    frame: res.headers.get('x-frame-options'),
    referrer: res.headers.get('referrer-policy'),
  };
  expect(headers).toEqual({
    what,
    type: expect.stringMatching(/^text\/html/),
    nosniff: 'nosniff',
    frame: 'DENY',
    referrer: expect.any(String),
  });
  const csp = res.headers.get('content-security-policy') ?? '';
  expect({ what, csp }).toEqual({ what, csp: expect.stringContaining("frame-ancestors 'none'") });
  expect({ what, csp }).toEqual({ what, csp: expect.not.stringMatching(/script-src[^;]*'unsafe-inline'|unsafe-eval/) });
  return csp;
}

describe('HTML pages', () => {
  let orgsTeams: RunningGrpcServer;
  let consoleBuild: string;
  let noConsole: string;
  const gateways: TestGateway[] = [];
  const start = async (env: Record<string, string>) => {
    const gw = await startTestGateway({ ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${orgsTeams.port}`, ...env }, log);
    gateways.push(gw);
    return gw;
  };

  beforeAll(async () => {
    orgsTeams = await startGrpcServer({
      name: 'orgs-teams',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(orgsTeamsV1.OrgsTeamsServiceService, {
          verifyEmail: async () => {
            throw new InputError('this verification link is not valid any more: ask for a new mail');
          },
        } as never),
      ],
      protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto'],
      log,
    });
    consoleBuild = fs.mkdtempSync(path.join(os.tmpdir(), 'console-'));
    fs.writeFileSync(
      path.join(consoleBuild, 'index.html'),
      '<!doctype html><title>console</title><script type="module" src="/assets/i.js"></script>',
    );
    noConsole = fs.mkdtempSync(path.join(os.tmpdir(), 'no-console-'));
  });
  afterAll(async () => {
    for (const gw of gateways) gw.close();
    await orgsTeams.shutdown(100);
    for (const dir of [consoleBuild, noConsole]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the console, the API reference and its redirect, the verification page and the sign-on refusal page', async () => {
    const gw = await start({
      CONSOLE_DIR: consoleBuild,
      OIDC_ISSUER_URL: 'https://idp.example',
      OIDC_CLIENT_ID: 'platform',
      OIDC_CLIENT_SECRET: 'not-used-here',
    });
    const page = async (p: string, status: number) => {
      const res = await fetch(`${gw.base}${p}`, { headers: { accept: 'text/html' }, redirect: 'manual' });
      expect({ p, status: res.status }).toEqual({ p, status });
      return res;
    };
    expect(expectPageHeaders(await page('/orgs/demo', 200), 'console')).toContain("script-src 'self'");
    expectPageHeaders(await page('/api/v1/docs/', 200), 'API reference');
    expectPageHeaders(await page('/api/v1/docs', 301), 'API reference redirect');
    expectPageHeaders(await page('/api/v1/docs/swagger/', 200), 'Swagger UI');
    expectPageHeaders(await page('/api/v1/docs/swagger', 301), 'Swagger UI redirect');
    for (const p of ['/api/v1/user/email-verification?code=abc', '/api/v1/user/email-verification']) {
      const verification = await page(p, 400);
      expect(expectPageHeaders(verification, p)).toBe("default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
      // The link's code is in the URL: the page sends no referrer at all.
      expect(verification.headers.get('referrer-policy')).toBe('no-referrer');
      expect(await verification.text()).toContain('Verification link not valid');
    }
    const refused = await page('/api/v1/user/oidc/callback?code=x&state=y', 400);
    expectPageHeaders(refused, 'sign-on refusal');
    expect(await refused.text()).toContain('Sign-in refused');
  });

  it('the status page, its inline style sheet allowed by its hash alone', async () => {
    const gw = await start({ CONSOLE_DIR: noConsole });
    const res = await fetch(`${gw.base}/favicon.ico`);
    const csp = expectPageHeaders(res, 'status page');
    const style = /<style>([^<]*)<\/style>/.exec(await res.text())![1];
    expect(csp).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}';`);
    expect(csp).not.toContain('unsafe-inline');
  });

  describe('whoever writes the answer', () => {
    let base: string;
    let server: http.Server;
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        securePages(res);
        if (req.url === '/in-writehead') res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<p>x</p>');
        else if (req.url === '/own-policy') {
          res.setHeader('Content-Type', 'text/html');
          res.setHeader('Content-Security-Policy', "default-src 'self'; frame-ancestors 'none'");
          res.end('<p>x</p>');
        } else res.setHeader('Content-Type', 'application/json').end('{}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => server.close());

    it('gives an HTML answer the headers it lacks, keeps those it set, and leaves other answers alone', async () => {
      expectPageHeaders(await fetch(`${base}/in-writehead`), 'content type given to writeHead');
      const own = await fetch(`${base}/own-policy`);
      expectPageHeaders(own, 'own policy');
      expect(own.headers.get('content-security-policy')).toBe("default-src 'self'; frame-ancestors 'none'");
      const json = await fetch(`${base}/json`);
      expect(json.headers.get('content-security-policy')).toBeNull();
      expect(json.headers.get('x-frame-options')).toBeNull();
    });
  });
});
