import type { Route } from '../route';
import { versionRoutes } from './version.routes';

/** The whole route table of /api/v1, one module per spec section. */
export const ROUTES: Route[] = [...versionRoutes];
