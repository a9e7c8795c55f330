import { loadConfig } from '@platform/service-kit';
import { gatewayEnv } from './config';
import { registeredRoutes } from './http';
import { ROUTES } from './sections';

export { gatewayApp } from './app';
export type { Route } from './route';

/** The route table as a deployment with these settings registers it (for the authorization-matrix test). */
export function registeredRoutesOn(env: NodeJS.ProcessEnv) {
  return registeredRoutes(ROUTES, loadConfig(gatewayEnv, env));
}
