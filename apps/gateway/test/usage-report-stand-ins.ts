import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import {
  adminAndOwner,
  fakeOrgAndCaller,
  startFakeBackends,
  type FakeBackendHandlers,
  type FakeBackends,
  type Holds,
} from './fake-backends';
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
 * answers), authz lets root do anything, the owner anything to its organization but the site's, and the member be
 * one; billing-dashboard and clusters answer as `handlers` say.
 */
export async function startUsageReportStandIns(
  handlers: Pick<FakeBackendHandlers, 'orgsTeams' | 'billingDashboard' | 'clusters'>,
): Promise<UsageReportStandIns> {
  const owner = adminAndOwner(ROOT, OWNER, DEMO);
  const holds: Holds = (userId, permission, objectId) =>
    owner(userId, permission, objectId) || (userId === MEMBER.id && objectId === DEMO.id && permission === 'member:org');
  const callers = fakeOrgAndCaller([ROOT, MALLORY, OWNER, MEMBER], DEMO, holds);
  const backends = await startFakeBackends({
    ...handlers,
    ...callers,
    orgsTeams: { ...handlers.orgsTeams, ...callers.orgsTeams },
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
