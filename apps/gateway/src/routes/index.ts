import type { Route } from '../route';
import { identityRoutes } from './identity.routes';
import { versionRoutes } from './version.routes';

/** The whole route table of /api/v1, one module per spec section. */
export const ROUTES: Route[] = [...versionRoutes, ...identityRoutes];
