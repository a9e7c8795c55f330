import { z } from 'zod';
import { defineRoute } from '../../route';

/** GET /version (spec section 9): the platform version, answered by a backend so the path is real. */
export const versionRoutes = [
  defineRoute({
    method: 'get',
    path: '/version',
    summary: 'Version of the platform',
    section: '9',
    auth: 'public',
    backend: 'orgs-teams',
    response: { status: 200, schema: z.object({ version: z.string() }).meta({ id: 'ServerVersion' }) },
    async handle(_input, { backends }) {
      const { version } = await backends.orgsTeams.identity.getVersion({});
      return { body: { version } };
    },
  }),
];
