import * as fs from 'node:fs';
import * as path from 'node:path';
import express, { type Request, type Response } from 'express';
import { PLATFORM_VERSION } from '@platform/service-kit';
import { versionClients, type Backends, type BackendName } from './backends';
import type { GatewayConfig } from './config';
import { API_DOCS_PATH, API_DOCUMENT_PATH } from './openapi';
import { inlineHash, pageHeaders } from './page-headers';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * What the console's page may load: its own scripts and styles only (no inline script, no eval), images from
 * itself and data: URIs (the branding logo and favicons are data URIs), API calls to the same origin.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const STATUS_PAGE_STYLE = 'body{font:15px system-ui;margin:2rem}td{padding:.2rem 1rem}.up{color:#1a7f37}.unreachable{color:#cf222e}';

/** What the status page may load: nothing but its own inline style sheet, allowed by its hash; no site may frame it. */
export const STATUS_PAGE_CSP = `default-src 'none'; style-src ${inlineHash(STATUS_PAGE_STYLE)}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** The built console: the configured folder, else `dist/apps/console` beside the bundle or up the workspace. */
export function consoleDir(config: { CONSOLE_DIR?: string }, start: string = __dirname): string | undefined {
  if (config.CONSOLE_DIR) return fs.existsSync(path.join(config.CONSOLE_DIR, 'index.html')) ? config.CONSOLE_DIR : undefined;
  // The bundle runs from dist/apps/gateway (console beside it); the sources from apps/gateway/src (dist at the root).
  const candidates = [path.join(start, '..', 'console')];
  for (let dir = start; path.dirname(dir) !== dir; dir = path.dirname(dir)) candidates.push(path.join(dir, 'dist', 'apps', 'console'));
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'index.html')));
}

/**
 * The web frontend: every non-API path lands here and answers 200 text/html, as the spec requires for
 * fallthrough paths. With a built console: its hashed assets (cached for a year, they never change under a name)
 * and, for every other path, its `index.html` (never cached, so a new release is picked up at once), both under a
 * strict Content-Security-Policy. A GET of a file under `/assets/` that the build lacks answers 404: the page in its
 * place would leave a browser with a blank console and no clue why. `index.html` is read again when the build was
 * replaced (`npm start` of the same checkout rebuilding it), so a reload loads the assets that are there.
 * Without a built console: a status page listing the services.
 */
export function webFrontend(backends: Backends, config: GatewayConfig): express.Handler[] {
  const dir = consoleDir(config);
  if (!dir) return [statusPage(backends, config)];
  const page = currentIndex(path.join(dir, 'index.html'));
  const secure = (res: Response) => res.set(pageHeaders(CONSOLE_CSP));
  const assets = express.static(dir, {
    index: false,
    immutable: true,
    maxAge: '365d',
    setHeaders: (res) => secure(res as unknown as Response),
  });
  const files = express.static(dir, { index: false, maxAge: '1d', setHeaders: (res) => secure(res as unknown as Response) });
  return [
    (req, res, next) => {
      res.locals.route = req.path.startsWith('/assets/') ? '/assets/*' : '/*';
      if (req.method === 'GET' || req.method === 'HEAD') {
        if (req.path.startsWith('/assets/')) return assets(req, res, () => missingAsset(req, secure(res)));
        if (req.path !== '/' && req.path !== '/index.html') return files(req, res, next);
      }
      next();
    },
    (_req, res) => {
      secure(res).status(200).set('Cache-Control', 'no-cache').type('html').send(page());
    },
  ];
}

/** 404 for a file under /assets/ that the build lacks; never cached, since a rebuild may bring it. */
function missingAsset(req: Request, res: Response) {
  res.status(404).set('Cache-Control', 'no-store').type('text').send(`no such file in the console's build: ${req.path}\n`);
}

/** The build's index.html, read again when it changed on disk (a new build renamed into place); the last one read when it is gone. */
function currentIndex(file: string): () => Buffer {
  let content = fs.readFileSync(file);
  let version = fs.statSync(file);
  return () => {
    try {
      const now = fs.statSync(file);
      if (now.ino !== version.ino || now.mtimeMs !== version.mtimeMs || now.size !== version.size) {
        content = fs.readFileSync(file);
        version = now;
      }
    } catch {
      // Between a build's removal and its replacement: the page read last.
    }
    return content;
  };
}

/** The start page without a built console: which backends answer, and links to the API. */
function statusPage(backends: Backends, config: GatewayConfig) {
  return async (req: Request, res: Response) => {
    // Only the start page asks the backends; other paths (favicon.ico, crawlers, stray webhooks) must not fan out.
    const rows =
      req.path === '/'
        ? (await backendStatus(backends))
            .map(([name, state]) => `<tr><td>${escape(name)}</td><td class="${state}">${state}</td></tr>`)
            .join('')
        : `<tr><td colspan="2"><a href="/">service status</a></td></tr>`;
    res
      .status(200)
      .set('Content-Security-Policy', STATUS_PAGE_CSP)
      .type('html')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Platform</title>` +
          `<style>${STATUS_PAGE_STYLE}</style></head>` +
          `<body><h1>Platform administration</h1>` +
          `<p>Version ${escape(PLATFORM_VERSION)} &middot; deployment ${escape(config.DEPLOYMENT_TYPE)}` +
          ` &middot; billing ${config.BILLING_ENABLED ? 'enabled' : 'disabled'}</p>` +
          `<h2>Services</h2><table>${rows}</table>` +
          `<h2>API</h2><ul><li><a href="${API_DOCS_PATH}/">API reference</a></li>` +
          `<li><a href="${API_DOCUMENT_PATH}">API document (OpenAPI)</a></li>` +
          `<li><a href="/api/v1/version">/api/v1/version</a></li></ul>` +
          `<p><small>${escape(req.method)} ${escape(req.path)}</small></p></body></html>`,
      );
  };
}

/** Health of each backend, asked with a short deadline so a down app cannot stall the page. */
async function backendStatus(backends: Backends): Promise<[BackendName, string][]> {
  return Promise.all(
    versionClients(backends).map(async ([name, client]): Promise<[BackendName, string]> => {
      try {
        await client.getVersion({}, { deadlineMs: 1_000 });
        return [name, 'up'];
      } catch {
        return [name, 'unreachable'];
      }
    }),
  );
}
