import { orgsTeamsV1 } from '@platform/proto';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// A user's tokens come whole from orgs-teams (the gateway keeps the whole answer); the edge answers Gitea's page of
// them, with the total and the neighbouring pages in the headers, as it does for the lists paged in orgs-teams.

describe("the pages of a user's token list", () => {
  const ALICE = orgsTeamsV1.User.fromPartial({ id: 5, login: 'alice', active: true });
  const BASIC = `Basic ${Buffer.from('alice:any-password').toString('base64')}`;
  let backends: FakeBackends;
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          // Any password signs alice in: what is asked here is the list, not the sign-in.
          authenticateBasic: async () => orgsTeamsV1.AuthenticateResponse.fromPartial({ user: ALICE }),
          listTokens: async () => ({
            tokens: [1, 2, 3, 4, 5].map((id) => orgsTeamsV1.TokenInfo.fromPartial({ id, name: `t${id}`, accessScopes: ['all'] })),
          }),
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const page = async (query: string) => {
    const res = await fetch(`${base}/api/v1/users/alice/tokens${query}`, { headers: { authorization: BASIC } });
    expect(res.status).toBe(200);
    const names = ((await res.json()) as { name: string }[]).map((t) => t.name);
    return { names, total: res.headers.get('x-total-count'), link: res.headers.get('link') ?? '' };
  };

  it('answers the page asked for and the count of all, the whole list within the default page', async () => {
    expect(await page('?page=2&limit=2')).toEqual({ names: ['t3', 't4'], total: '5', link: expect.stringContaining('rel="next"') });
    expect(await page('?page=3&limit=2')).toMatchObject({ names: ['t5'], total: '5' });
    expect(await page('?page=9&limit=2')).toMatchObject({ names: [], total: '5' });
    expect(await page('')).toEqual({ names: ['t1', 't2', 't3', 't4', 't5'], total: '5', link: '' });
  });
});
