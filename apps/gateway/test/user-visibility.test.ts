import { NotAuthenticatedError, NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// What others see of an account (docs/authentication.md): its e-mail address and its flags (is_admin, last_login,
// active, prohibit_login, language, login_name) go to the user itself and site admins only; anyone else is answered
// Gitea's zero values, in the same fields. A stand-in orgs-teams answers every user whole, as it does.

const user = (id: number, login: string, more: Partial<orgsTeamsV1.User>) =>
  orgsTeamsV1.User.fromPartial({
    id,
    login,
    email: `${login}@example.com`,
    emailVerified: true,
    active: true,
    lastLoginUnix: 1_790_000_000 + id,
    language: 'fr-FR',
    loginName: `${login}@corp`,
    ...more,
  });
const ROOT = user(1, 'root', { isAdmin: true });
const ALICE = user(5, 'alice', {});
const BOB = user(6, 'bob', { prohibitLogin: true });
const USERS = [ROOT, ALICE, BOB];

/** The fields the rule decides, as each user is answered to one who sees it whole. */
const whole = (u: orgsTeamsV1.User) => ({
  login: u.login,
  email: u.email,
  email_verified: true,
  is_admin: u.isAdmin,
  last_login: new Date(u.lastLoginUnix * 1000).toISOString().replace('.000Z', 'Z'),
  active: true,
  prohibit_login: u.prohibitLogin,
  language: 'fr-FR',
  login_name: u.loginName,
  source_id: 0,
});
/** The same fields as anyone else is answered them: Gitea's zero values. */
const zeroed = (u: orgsTeamsV1.User) => ({
  login: u.login,
  email: '',
  is_admin: false,
  last_login: '0001-01-01T00:00:00Z',
  active: false,
  prohibit_login: false,
  language: '',
  login_name: '',
  source_id: 0,
});
const FIELDS = [...Object.keys(whole(ROOT))];
const decided = (u: Record<string, unknown>) => Object.fromEntries(Object.entries(u).filter(([k]) => FIELDS.includes(k)));

describe("others' account flags at the edge", () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    // orgs-teams answers every user whole, as it does; the edge decides what each caller sees of them.
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: async ({ token }) => {
            const caller = USERS.find((u) => u.login === token);
            if (!caller) throw new NotAuthenticatedError('invalid token');
            return { user: caller, tokenId: caller.id, scope: '', scopeAccountId: 0, accessScopes: ['all'] };
          },
          searchUsers: async () => ({ users: USERS, total: USERS.length }),
          getUser: async ({ login }) => {
            const found = USERS.find((u) => u.login === login);
            if (!found) throw new NotFoundError(`user ${login} does not exist`);
            return found;
          },
        },
        organizations: {
          getOrg: async ({ name }) => orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: name, visibility: 'public' }),
          listMembers: async () => ({ members: USERS, total: USERS.length }),
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const get = async (path: string, token?: string) => {
    const res = await fetch(`${base}/api/v1${path}`, token ? { headers: { authorization: `token ${token}` } } : {});
    expect(res.status).toBe(200);
    return (await res.json()) as any;
  };

  it("answers a plain user's search with zero flags for others and its own whole", async () => {
    const { data } = await get('/users/search?q=', 'alice');
    expect(data.map(decided)).toEqual([zeroed(ROOT), whole(ALICE), zeroed(BOB)]);
    // The same fields are there, so a Gitea client reads the same shape.
    expect(Object.keys(data[0]).sort()).toEqual(
      Object.keys(data[1])
        .filter((k) => k !== 'email_verified')
        .sort(),
    );
  });

  it('answers a site admin every account whole', async () => {
    const { data } = await get('/users/search?q=', 'root');
    expect(data.map(decided)).toEqual(USERS.map(whole));
  });

  it('hides the flags on a single user and on the members an anonymous caller may list', async () => {
    expect(decided(await get('/users/root', 'alice'))).toEqual(zeroed(ROOT));
    expect(decided(await get('/users/bob', 'root'))).toEqual(whole(BOB));
    expect(decided(await get('/user', 'alice'))).toEqual(whole(ALICE));
    expect((await get('/orgs/acme/public_members')).map(decided)).toEqual(USERS.map(zeroed));
  });
});
