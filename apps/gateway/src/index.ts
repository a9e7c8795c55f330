import { loadConfig } from '@platform/service-kit';
import { gatewayEnv } from './config';
import { registeredRoutes } from './http';
import { ROUTES } from './sections';

export { gatewayApp } from './app';
export type { Route } from './route';
// For the admin CLI's migrate (deploy/cli): the gateway's schema, used when it runs with DATABASE_URL.
export { migrations as gatewayMigrations } from '../migrations';

/** The route table as a deployment with these settings registers it (for the authorization-matrix test). */
export function registeredRoutesOn(env: NodeJS.ProcessEnv) {
  return registeredRoutes(ROUTES, loadConfig(gatewayEnv, env));
}
