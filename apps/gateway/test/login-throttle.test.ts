import { startTestGateway } from './test-gateway';
import { NotAuthenticatedError, TooManyRequestsError } from '@platform/errors';
import { orgsTeamsV1 } from '@platform/proto';
import { bindService, ConfigError, createLogger, loadConfig, startGrpcServer, type RunningGrpcServer } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { createTestDatabase } from '@platform/testing';
import { gatewayApp } from '../src/app';
import { addressKey } from '../src/authentication';
import { gatewayEnv } from '../src/config';

const log = createLogger('gateway-test', 'silent');
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const user = (id: number, login: string) => orgsTeamsV1.User.fromPartial({ id, login, active: true });

/** A stand-in orgs-teams: "right" is every account's password, "locked" is over its per-account limit. */
async function startOrgsTeams(): Promise<{ server: RunningGrpcServer; calls: string[] }> {
  const calls: string[] = [];
  const server = await startGrpcServer({
    name: 'orgs-teams',
    port: 0,
    host: '127.0.0.1',
    services: [
      bindService(orgsTeamsV1.OrgsTeamsServiceService, {
        authenticateBasic: async ({ username, password }: orgsTeamsV1.AuthenticateBasicRequest) => {
          calls.push(username);
          if (username === 'locked') throw new TooManyRequestsError('too many failed sign-in attempts for this account', 7);
          if (password !== 'right') throw new NotAuthenticatedError('invalid username or password');
          return { user: user(calls.length, username), tokenId: 0, scope: '', scopeAccountId: 0, accessScopes: [] };
        },
        listTokens: async () => ({ tokens: [] }),
      } as never),
    ],
    protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto'],
    log,
  });
  return { server, calls };
}

async function gateway(env: Record<string, string>) {
  const gw = await startTestGateway(env, log);
  const base = `${gw.base}/api/v1`;
  return {
    /** GET /users/{login}/tokens with Basic credentials (a Basic-auth route), optionally claiming a client address. */
    async list(login: string, password: string, forwardedFor?: string) {
      const headers: Record<string, string> = { authorization: basic(login, password) };
      if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
      const res = await fetch(`${base}/users/${login}/tokens`, { headers });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
    },
    close: gw.close,
  };
}

describe('gateway: failed Basic-auth attempts per client address', () => {
  let orgsTeams: Awaited<ReturnType<typeof startOrgsTeams>>;
  const env = () => ({
    ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${orgsTeams.server.port}`,
    LOGIN_MAX_FAILURES_PER_ADDRESS: '3',
    LOGIN_FAILURE_WINDOW_SECONDS: '60',
  });
  beforeAll(async () => {
    orgsTeams = await startOrgsTeams();
  });
  afterAll(() => orgsTeams.server.shutdown(100));
  beforeEach(() => {
    orgsTeams.calls.length = 0;
  });

  it('answers 429 with Retry-After once an address has too many failures, without asking orgs-teams', async () => {
    const gw = await gateway(env());
    try {
      expect((await gw.list('alice', 'right')).status).toBe(200); // successes are not counted
      for (const login of ['alice', 'bob', 'carol']) expect((await gw.list(login, 'wrong')).status).toBe(401);
      const refused = await gw.list('dave', 'right');
      expect(refused.status).toBe(429);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(59);
      expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
      expect(refused.body).toEqual({
        message: expect.stringMatching(/^too many failed sign-in attempts from this address; try again in \d+ s$/),
        url: expect.any(String),
      });
      // Claiming another address changes nothing while TRUST_PROXY is unset.
      expect((await gw.list('dave', 'right', '203.0.113.9')).status).toBe(429);
      expect(orgsTeams.calls).toEqual(['alice', 'alice', 'bob', 'carol']);
    } finally {
      gw.close();
    }
  });

  it('passes the per-account 429 of orgs-teams through with its Retry-After, and does not count it', async () => {
    const gw = await gateway(env());
    try {
      for (let i = 0; i < 4; i += 1) {
        const res = await gw.list('locked', 'right');
        expect(res).toEqual({
          status: 429,
          retryAfter: '7',
          body: { message: 'too many failed sign-in attempts for this account', url: expect.any(String) },
        });
      }
      expect((await gw.list('alice', 'right')).status).toBe(200);
    } finally {
      gw.close();
    }
  });

  it('counts the client named in X-Forwarded-For when TRUST_PROXY trusts the peer', async () => {
    const gw = await gateway({ ...env(), TRUST_PROXY: 'loopback' });
    try {
      for (let i = 0; i < 3; i += 1) expect((await gw.list('alice', 'wrong', '203.0.113.9')).status).toBe(401);
      expect((await gw.list('alice', 'right', '203.0.113.9')).status).toBe(429);
      expect((await gw.list('alice', 'right', '198.51.100.7')).status).toBe(200);
      // A client cannot hide behind a forged entry: the trusted proxy's own entry comes last.
      expect((await gw.list('alice', 'right', '198.51.100.7, 203.0.113.9')).status).toBe(429);
    } finally {
      gw.close();
    }
  });
});

describe('gateway: replicas on one Postgres database share the failures per address', () => {
  let orgsTeams: Awaited<ReturnType<typeof startOrgsTeams>>;
  let database: { url: string; drop(): Promise<void> };
  const replicas: AppUnderTest[] = [];
  beforeAll(async () => {
    orgsTeams = await startOrgsTeams();
    database = await createTestDatabase();
    for (let i = 0; i < 2; i += 1)
      replicas.push(
        await startAppForTest(gatewayApp, {
          DATABASE_URL: database.url,
          HTTP_PORT: '0',
          ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${orgsTeams.server.port}`,
          LOGIN_MAX_FAILURES_PER_ADDRESS: '3',
          LOGIN_FAILURE_WINDOW_SECONDS: '60',
        }),
      );
  }, 60_000);
  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await database?.drop();
    await orgsTeams?.server.shutdown(100);
  });

  it('refuses the fourth attempt of an address with three failures spread over two gateways, on either of them', async () => {
    const list = async (replica: AppUnderTest, login: string, password: string) => {
      const res = await fetch(`http://127.0.0.1:${replica.running.httpPort}/api/v1/users/${login}/tokens`, {
        headers: { authorization: basic(login, password) },
      });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { message: string } };
    };
    const [one, two] = replicas;
    for (const [replica, login] of [
      [one, 'alice'],
      [two, 'bob'],
      [one, 'carol'],
    ] as const)
      expect((await list(replica, login, 'wrong')).status).toBe(401);
    for (const replica of [two, one]) {
      const refused = await list(replica, 'dave', 'right');
      expect(refused.status).toBe(429);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(59);
      expect(refused.body.message).toMatch(/^too many failed sign-in attempts from this address; try again in \d+ s$/);
    }
    // The refusals never reached orgs-teams: no password was checked for them.
    expect(orgsTeams.calls).toEqual(['alice', 'bob', 'carol']);
  });
});

describe('gateway login-throttle settings', () => {
  it('validates the limits and TRUST_PROXY', () => {
    expect(loadConfig(gatewayEnv, {})).toMatchObject({
      LOGIN_MAX_FAILURES_PER_ADDRESS: 30,
      LOGIN_FAILURE_WINDOW_SECONDS: 900,
      TRUST_PROXY: undefined,
    });
    expect(loadConfig(gatewayEnv, { TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadConfig(gatewayEnv, { TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8' }).TRUST_PROXY).toEqual([
      'loopback',
      '10.0.0.0/8',
      'fd00::/8',
    ]);
    for (const bad of [
      { TRUST_PROXY: 'true' },
      { TRUST_PROXY: '10.0.0.0/33' },
      { TRUST_PROXY: '0' },
      { LOGIN_MAX_FAILURES_PER_ADDRESS: '0' },
      { LOGIN_FAILURE_WINDOW_SECONDS: 'soon' },
    ])
      expect(() => loadConfig(gatewayEnv, bad)).toThrow(ConfigError);
  });

  it('counts IPv4 (also IPv4-mapped) addresses as they are and IPv6 addresses by their /64', () => {
    expect(addressKey('192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2::99')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:DB8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey(undefined)).toBe('unknown');
  });
});
