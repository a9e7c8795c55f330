import { PLATFORM_VERSION } from '@platform/service-kit';
import type { Route } from './route';

/** Where the API document is served; error bodies point here (spec section 7.1). */
export const API_DOCUMENT_PATH = '/api/v1/openapi.json';

/** OpenAPI 3.1 document of the routes registered on this deployment. */
export function apiDocument(routes: Route[]): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const r of routes) {
    const p = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[p] ??= {};
    paths[p][r.method] = {
      summary: r.summary,
      tags: [r.service],
      security: r.auth === 'public' ? [] : [{ token: [] }],
      responses: { default: { description: 'see the platform API specification' } },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Platform administration API', version: PLATFORM_VERSION },
    servers: [{ url: '/api/v1' }],
    components: { securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'Authorization' } } },
    paths,
  };
}
