import { orgsTeamsV1 } from '@platform/proto';
import { describeServiceContract } from '@platform/service-testing';
import { startOrgsTeams } from '../src/app';

describeServiceContract({
  app: 'orgs-teams',
  schema: 'identity',
  grpcService: 'platform.orgsteams.v1.OrgsTeamsService',
  definition: orgsTeamsV1.OrgsTeamsServiceService,
  start: startOrgsTeams,
});
