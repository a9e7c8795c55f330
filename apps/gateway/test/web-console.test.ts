import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { consoleDir } from '../src/frontend';
import { startTestGateway, type TestGateway } from './test-gateway';

/** A built console as Vite lays it out: index.html naming a hashed asset under assets/. */
function fakeConsole(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>console</title><script type="module" src="/assets/index-AbC123.js"></script>');
  fs.writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log("console")');
  fs.writeFileSync(path.join(dir, 'robots.txt'), 'User-agent: *');
  return dir;
}

describe('the web console at /', () => {
  let dir: string;
  let gw: TestGateway;
  beforeAll(async () => {
    dir = fakeConsole();
    gw = await startTestGateway({ CONSOLE_DIR: dir });
  });
  afterAll(() => {
    gw.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers / and every screen path with index.html, never cached, under a CSP without inline script', async () => {
    for (const [method, p] of [
      ['GET', '/'],
      ['GET', '/orgs/demo/teams'],
      ['GET', '/admin/billing?org=demo'],
      ['POST', '/marketplace/api/v1/version'],
    ]) {
      const res = await fetch(`${gw.base}${p}`, { method });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(await res.text()).toContain('/assets/index-AbC123.js');
    }
  });

  it('serves hashed assets for a year, immutable, and other files for a day', async () => {
    const asset = await fetch(`${gw.base}/assets/index-AbC123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await asset.text()).toBe('console.log("console")');
    const robots = await fetch(`${gw.base}/robots.txt`);
    expect(robots.headers.get('cache-control')).toBe('public, max-age=86400');
  });

  it('answers a file under /assets/ that the build lacks with 404, not the page, and leaves the API its JSON 404', async () => {
    for (const method of ['GET', 'HEAD']) {
      const missing = await fetch(`${gw.base}/assets/index-Gone99.js`, { method });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(missing.headers.get('cache-control')).toBe('no-store');
      expect(missing.headers.get('x-content-type-options')).toBe('nosniff');
      if (method === 'GET') expect(await missing.text()).toContain('/assets/index-Gone99.js');
    }
    // A screen's path that looks like a file outside assets/ is still the page.
    expect((await fetch(`${gw.base}/orgs/demo.js`)).status).toBe(200);
    const api = await fetch(`${gw.base}/api/v1/no-such-route`);
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ message: 'no route for GET /api/v1/no-such-route' });
  });

  it('serves the new index.html once a rebuild replaced the build, and its assets', async () => {
    const next = fs.mkdtempSync(path.join(os.tmpdir(), 'console-next-'));
    const before = `${dir}.before`;
    try {
      fs.mkdirSync(path.join(next, 'assets'));
      fs.writeFileSync(
        path.join(next, 'index.html'),
        '<!doctype html><title>console</title><script type="module" src="/assets/index-New456.js"></script>',
      );
      fs.writeFileSync(path.join(next, 'assets', 'index-New456.js'), 'console.log("new")');
      // As console-ready.mjs swaps a build in: the old one renamed aside, the new one renamed into place.
      fs.renameSync(dir, before);
      fs.renameSync(next, dir);
      expect(await (await fetch(`${gw.base}/`)).text()).toContain('/assets/index-New456.js');
      expect((await fetch(`${gw.base}/assets/index-New456.js`)).status).toBe(200);
      expect((await fetch(`${gw.base}/assets/index-AbC123.js`)).status).toBe(404);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(before, dir);
    }
    expect(await (await fetch(`${gw.base}/`)).text()).toContain('/assets/index-AbC123.js');
  });

  it('finds the console beside the gateway bundle or under the workspace, and only a folder holding index.html', () => {
    expect(consoleDir({ CONSOLE_DIR: dir })).toBe(dir);
    expect(consoleDir({ CONSOLE_DIR: path.join(dir, 'assets') })).toBeUndefined();
    const bundle = fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-'));
    try {
      fs.mkdirSync(path.join(bundle, 'dist', 'apps', 'gateway'), { recursive: true });
      fs.cpSync(dir, path.join(bundle, 'dist', 'apps', 'console'), { recursive: true });
      expect(consoleDir({}, path.join(bundle, 'dist', 'apps', 'gateway'))).toBe(path.join(bundle, 'dist', 'apps', 'gateway', '..', 'console'));
    } finally {
      fs.rmSync(bundle, { recursive: true, force: true });
    }
  });
});

describe('without a built console', () => {
  it('/ is the status page listing the services and linking to the API reference', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'no-console-'));
    const gw = await startTestGateway({ CONSOLE_DIR: empty, BACKEND_DEADLINE_MS: '200' });
    try {
      const res = await fetch(`${gw.base}/`);
      expect(res.status).toBe(200);
      const page = await res.text();
      expect(page).toContain('<h2>Services</h2>');
      expect(page).toContain('orgs-teams');
      expect(page).toContain('href="/api/v1/docs/"');
      // No site may frame it, and it loads nothing: its one style sheet is inline, allowed by its hash.
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toMatch(
        /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]{43}='; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/,
      );
      expect(page).not.toContain('<script');
    } finally {
      gw.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
