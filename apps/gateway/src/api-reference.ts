import * as path from 'node:path';
import express from 'express';
import { PLATFORM_VERSION } from '@platform/service-kit';
import { renderReference, REFERENCE_STYLE } from './api-reference-page';
import { API_DOCS_PATH, API_DOCUMENT_PATH } from './openapi';
import { inlineHash, PAGE_CSP, pageHeaders } from './page-headers';

/** Where Swagger UI is served, under the reference: for trying calls from the browser. */
export const SWAGGER_UI_PATH = `${API_DOCS_PATH}/swagger`;

/** The reference page loads nothing but its own inline stylesheet (allowed by its hash); no script at all. */
export const API_DOCS_CSP = `${PAGE_CSP}; style-src ${inlineHash(REFERENCE_STYLE)}`;

/**
 * What Swagger UI may load: its scripts from beside it (no inline script, no eval), its styles (React sets style
 * attributes, hence 'unsafe-inline' for styles only), its data: icons, the document and "Try it out" calls to the same
 * origin; no site may frame it.
 */
export const SWAGGER_UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Swagger UI's start-up script, served beside its assets. */
const SWAGGER_SCRIPT = 'platform-reference.js';

function swaggerScript(): string {
  return `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(API_DOCUMENT_PATH)},
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  deepLinking: true,
});
`;
}

/** Swagger UI's page: its assets from beside it, pointed at the served document. */
function swaggerPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Platform administration API ${PLATFORM_VERSION}: Swagger UI</title>
  <link rel="stylesheet" href="./swagger-ui.css">
  <link rel="icon" type="image/png" href="./favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="./swagger-ui-bundle.js"></script>
  <script src="./swagger-ui-standalone-preset.js"></script>
  <script src="./${SWAGGER_SCRIPT}"></script>
</body>
</html>
`;
}

/** A page answered at `base` with a trailing slash (its relative links need it), redirecting there without one. */
function pageAt(router: express.Router, base: string, mount: string, html: () => string): void {
  router.get(mount, (req, res) => {
    if (!req.originalUrl.split('?')[0].endsWith('/')) return res.redirect(301, `${base}/`);
    res.locals.route = base;
    res.type('html').send(html());
  });
}

/**
 * The browsable reference of `document` (api-reference-page.ts), rendered on its first request and kept (the document
 * does not change while the gateway runs), and Swagger UI under `swagger/`, served from the swagger-ui-dist package
 * (no CDN).
 */
export function apiReference(document: () => object): express.Router {
  const router = express.Router();
  let page: string | undefined;
  const reference = () =>
    (page ??= renderReference(document() as Parameters<typeof renderReference>[0], {
      document: API_DOCUMENT_PATH,
      swagger: `${SWAGGER_UI_PATH}/`,
    }));
  const referenceHeaders = pageHeaders(API_DOCS_CSP);
  const swaggerHeaders = pageHeaders(SWAGGER_UI_CSP);
  router.use('/swagger', (_req, res, next) => {
    res.set(swaggerHeaders);
    next();
  });
  pageAt(router, SWAGGER_UI_PATH, '/swagger', swaggerPage);
  // Swagger UI's own start-up script is a file too, so its policy needs no inline script.
  router.get(`/swagger/${SWAGGER_SCRIPT}`, (_req, res) => {
    res.locals.route = `${SWAGGER_UI_PATH}/${SWAGGER_SCRIPT}`;
    res.type('js').send(swaggerScript());
  });
  const dist = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  router.use('/swagger', express.static(dist, { index: false, fallthrough: false }));
  router.use((_req, res, next) => {
    res.set(referenceHeaders);
    next();
  });
  pageAt(router, API_DOCS_PATH, '/', reference);
  return router;
}
