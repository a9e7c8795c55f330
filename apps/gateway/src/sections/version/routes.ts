import { z } from 'zod';
import { sectionRoutes } from '../../route';

const route = sectionRoutes({ tag: 'Miscellaneous', backend: 'orgs-teams' });

/** GET /version: the platform version, answered by a backend so the path is real. */
export const versionRoutes = [
  route({
    method: 'get',
    scope: 'read:misc',
    path: '/version',
    summary: 'Version of the platform',
    auth: 'public',
    response: { status: 200, schema: z.object({ version: z.string() }).meta({ id: 'ServerVersion' }) },
    async handle(_input, { backends }) {
      const { version } = await backends.orgsTeams.identity.getVersion({});
      return { body: { version } };
    },
  }),
];
