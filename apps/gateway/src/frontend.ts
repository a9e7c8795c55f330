import type { Request, Response } from 'express';
import { PLATFORM_VERSION } from '@platform/service-kit';
import { versionClients, type Backends, type BackendName } from './backends';
import type { GatewayConfig } from './config';
import { API_DOCS_PATH, API_DOCUMENT_PATH } from './openapi';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

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

/**
 * The web frontend: every non-API path lands here. For now a status page with links to the API;
 * it answers 200 text/html whatever the path, as the spec requires for fallthrough paths.
 */
export function webFrontend(backends: Backends, config: GatewayConfig) {
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
      .type('html')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Platform</title>` +
          `<style>body{font:15px system-ui;margin:2rem}td{padding:.2rem 1rem}.up{color:#1a7f37}.unreachable{color:#cf222e}</style></head>` +
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
