import type { Route } from '../route';

/** GET /version (spec section 9): the platform version, answered by a backend so the path is real. */
export const versionRoutes: Route[] = [
  {
    method: 'get',
    path: '/version',
    summary: 'Version of the platform',
    auth: 'public',
    service: 'orgs-teams',
    async handle(_req, { backends, requestId }) {
      const { version } = await backends['orgs-teams'].getVersion({}, { requestId });
      return { body: { version } };
    },
  },
];
