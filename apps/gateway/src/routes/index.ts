import type { Route } from '../route';
import { authzRoutes } from './authz.routes';
import { avatarRoutes } from './avatar.routes';
import { objectRoutes } from './objects.routes';
import { settingsRoutes } from './settings.routes';
import { identityRoutes } from './identity.routes';
import { orgsRoutes } from './orgs.routes';
import { orgTokensRoutes } from './org-tokens.routes';
import { claimsRoutes } from './claims.routes';
import { teamsRoutes } from './teams.routes';
import { versionRoutes } from './version.routes';

/** The whole route table of /api/v1, one module per spec section. */
export const ROUTES: Route[] = [
  ...versionRoutes,
  ...identityRoutes,
  ...authzRoutes,
  ...settingsRoutes,
  ...avatarRoutes,
  ...objectRoutes,
  ...claimsRoutes,
  ...orgsRoutes,
  ...orgTokensRoutes,
  ...teamsRoutes,
];
