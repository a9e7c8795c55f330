import { NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { startFakeBackends, tokenIsLogin, type FakeBackendHandlers, type FakeBackends } from './fake-backends';
import { startTestGateway, type TestGateway } from './test-gateway';

// The stand-in backends of the usage-report rows' tests: root, a site admin; mallory, a user; the owner of the demo
// organization, which is no site admin, and a member of it. Two gateways on them: billing enabled, and billing disabled.

export const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true });
export const MALLORY = orgsTeamsV1.User.fromPartial({ id: 5, login: 'mallory', active: true });
export const OWNER = orgsTeamsV1.User.fromPartial({ id: 6, login: 'owner', active: true });
export const MEMBER = orgsTeamsV1.User.fromPartial({ id: 7, login: 'member', active: true });
export const DEMO = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'demo', visibility: 'public' });

export interface UsageReportStandIns {
  backends: FakeBackends;
  /** The gateway where billing is enabled, e.g. http://127.0.0.1:41234 */
  base: string;
  /** The gateway where billing is disabled. */
  disabled: string;
  close(): Promise<void>;
}

/**
 * For the describe it is called in: the stand-ins and gateways of startUsageReportStandIns, started before its tests,
 * their calls forgotten before each, closed after them.
 */
export function usageReportStandIns(handlers: Parameters<typeof startUsageReportStandIns>[0]): UsageReportStandIns {
  const standIns = {} as UsageReportStandIns;
  beforeAll(async () => void Object.assign(standIns, await startUsageReportStandIns(handlers)));
  afterAll(() => standIns.close?.());
  beforeEach(() => standIns.backends.reset());
  return standIns;
}

/**
 * The gateways on stand-ins where orgs-teams knows the users above and the demo organization (with `orgsTeams`' other
 * answers), authz lets root do anything, the owner anything to its organization and the member be one, and billing-dashboard answers
 * as `billingDashboard` says.
 */
export async function startUsageReportStandIns(
  handlers: Pick<FakeBackendHandlers, 'orgsTeams' | 'billingDashboard' | 'clusters'>,
): Promise<UsageReportStandIns> {
  const backends = await startFakeBackends({
    ...handlers,
    orgsTeams: {
      ...handlers.orgsTeams,
      identity: { authenticate: tokenIsLogin([ROOT, MALLORY, OWNER, MEMBER]) },
      organizations: {
        getOrg: async ({ name }) => {
          if (name !== 'demo') throw new NotFoundError(`organization ${name} does not exist`);
          return DEMO;
        },
      },
    },
    authz: {
      authz: {
        checkPermission: async ({ userId, permission, objectId }) => ({
          allowed:
            userId === ROOT.id || (objectId === DEMO.id && (userId === OWNER.id || (userId === MEMBER.id && permission === 'member:org'))),
          dependsOn: [],
        }),
      },
    },
  });
  const gateways: TestGateway[] = [];
  for (const billing of ['true', 'false'])
    gateways.push(await startTestGateway({ ...backends.env, BILLING_ENABLED: billing, PLATFORM_ADMIN_ORG: 'none' }));
  return {
    backends,
    base: gateways[0].base,
    disabled: gateways[1].base,
    close: async () => {
      gateways.forEach((g) => g.close());
      await backends.close();
    },
  };
}
