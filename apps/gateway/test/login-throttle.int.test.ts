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

/**
 * A stand-in orgs-teams: "right" is every account's password, "locked" is over its per-account limit. While `hold`
 * is set, each check waits until `letGo()`, as slow password checks would: the attempts pile up in flight.
 */
async function startOrgsTeams(): Promise<{
  server: RunningGrpcServer;
  calls: string[];
  hold: { on: boolean; waiting: number; letGo(): void };
  onCall: () => void;
}> {
  const calls: string[] = [];
  const waiters: (() => void)[] = [];
  const stub = {
    onCall: () => {},
    hold: {
      on: false,
      get waiting() {
        return waiters.length;
      },
      letGo() {
        stub.hold.on = false;
        for (const go of waiters.splice(0)) go();
      },
    },
  };
  const server = await startGrpcServer({
    name: 'orgs-teams',
    port: 0,
    host: '127.0.0.1',
    services: [
      bindService(orgsTeamsV1.OrgsTeamsServiceService, {
        authenticateBasic: async ({ username, password }: orgsTeamsV1.AuthenticateBasicRequest) => {
          calls.push(username);
          if (stub.hold.on) {
            const turn = new Promise<void>((go) => waiters.push(go));
            stub.onCall();
            await turn;
          }
          if (username === 'locked') throw new TooManyRequestsError('too many failed sign-in attempts for this account', 7);
          if (password !== 'right') throw new NotAuthenticatedError('invalid username or password');
          return { user: user(calls.length, username), tokenId: 0, scope: '', scopeAccountId: 0, accessScopes: [] };
        },
        // A token is taken whatever the address's count: the limit is on guessing passwords.
        authenticate: async ({ token }: orgsTeamsV1.AuthenticateRequest) => {
          if (token !== 'alice-token') throw new NotAuthenticatedError('invalid token');
          return { user: user(1, 'alice'), tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: ['all'] };
        },
        listTokens: async () => ({ tokens: [] }),
        getVersion: async () => ({ version: 'test', service: 'orgs-teams' }),
      } as never),
    ],
    protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto'],
    log,
  });
  return {
    server,
    calls,
    hold: stub.hold,
    set onCall(fn: () => void) {
      stub.onCall = fn;
    },
  };
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
    base,
    close: gw.close,
  };
}

/**
 * Retry-After is what is left of the 60 s window, which opened with the first failure, no earlier than `started`:
 * at most 60 s, and at least 60 s less the time this machine took since, however busy it is.
 */
function expectWaitLeft(retryAfter: unknown, started: number): void {
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(60 - Math.ceil((Date.now() - started) / 1000));
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
    const started = Date.now();
    const gw = await gateway(env());
    try {
      expect((await gw.list('alice', 'right')).status).toBe(200); // successes are not counted
      for (const login of ['alice', 'bob', 'carol']) expect((await gw.list(login, 'wrong')).status).toBe(401);
      const refused = await gw.list('dave', 'right');
      expect(refused.status).toBe(429);
      expectWaitLeft(refused.retryAfter, started);
      expect(refused.body).toEqual({
        message: expect.stringMatching(/^too many failed sign-in attempts from this address; try again in \d+ s$/),
        url: expect.any(String),
      });
      // Claiming another address changes nothing while TRUST_PROXY is unset.
      expect((await gw.list('dave', 'right', '203.0.113.9')).status).toBe(429);
      expect(orgsTeams.calls).toEqual(['alice', 'alice', 'bob', 'carol']);
      // Tokens still work from the address while its passwords are refused.
      const byToken = await fetch(`${gw.base}/user`, { headers: { authorization: 'token alice-token' } });
      expect([byToken.status, ((await byToken.json()) as { login: string }).login]).toEqual([200, 'alice']);
    } finally {
      gw.close();
    }
  });

  it('takes Basic credentials on token and public rows through the same count: failures anywhere close every door of the address', async () => {
    const started = Date.now();
    const gw = await gateway(env());
    const call = async (path: string, login: string, password: string) => {
      const res = await fetch(`${gw.base}${path}`, { headers: { authorization: basic(login, password) } });
      return {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as { login?: string; message?: string },
      };
    };
    try {
      // A token row and a public row sign the caller in with the password, as the token routes do.
      expect(await call('/user', 'alice', 'right')).toMatchObject({ status: 200, body: { login: 'alice' } });
      expect((await call('/version', 'alice', 'right')).status).toBe(200);
      // A wrong password is 401 on a public row too (a credential sent must be valid), and counted wherever it was sent.
      expect((await call('/user', 'bob', 'wrong')).status).toBe(401);
      expect((await call('/version', 'carol', 'wrong')).status).toBe(401);
      expect((await gw.list('dave', 'wrong')).status).toBe(401);
      for (const path of ['/user', '/version', '/users/erin/tokens']) {
        const refused = await call(path, 'erin', 'right');
        expect(refused.status).toBe(429);
        expectWaitLeft(refused.retryAfter, started);
        expect(refused.body.message).toMatch(/^too many failed sign-in attempts from this address; try again in \d+ s$/);
      }
      // No password was checked for the refused ones; malformed credentials never reach orgs-teams either.
      expect(orgsTeams.calls).toEqual(['alice', 'alice', 'bob', 'carol', 'dave']);
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
    const started = Date.now();
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
      expectWaitLeft(refused.retryAfter, started);
      expect(refused.body.message).toMatch(/^too many failed sign-in attempts from this address; try again in \d+ s$/);
    }
    // The refusals never reached orgs-teams: no password was checked for them.
    expect(orgsTeams.calls).toEqual(['alice', 'bob', 'carol']);
  });
});

describe('gateway: a burst of concurrent Basic attempts from one address, over two gateways on one database', () => {
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

  it('checks no more than the limit of 100 attempts at once, answering each 401 or 429 and the right password 200 or 429', async () => {
    const list = (replica: AppUnderTest, password: string) =>
      fetch(`http://127.0.0.1:${replica.running.httpPort}/api/v1/users/alice/tokens`, {
        headers: { authorization: basic('alice', password) },
      }).then((res) => res.status);
    // Every check waits until all 100 attempts were either answered or are being checked: the burst is all in flight.
    orgsTeams.hold.on = true;
    let answered = 0;
    let allIn!: () => void;
    const burstIn = new Promise<void>((resolve) => (allIn = resolve));
    const tally = () => {
      if (answered + orgsTeams.hold.waiting === 100) allIn();
    };
    orgsTeams.onCall = tally;
    const RIGHT = 50;
    const statuses = Array.from({ length: 100 }, (_, i) =>
      list(replicas[i % 2], i === RIGHT ? 'right' : 'wrong').then((status) => {
        answered += 1;
        tally();
        return status;
      }),
    );
    await burstIn;
    orgsTeams.hold.letGo();
    const answers = await Promise.all(statuses);

    // Three attempts were checked, however many arrived at once; every other was refused at once, none failed.
    expect(orgsTeams.calls).toHaveLength(3);
    expect(answers.filter((s) => ![401, 429, 200].includes(s))).toEqual([]);
    expect([200, 429]).toContain(answers[RIGHT]);
    const wrongChecked = answers[RIGHT] === 200 ? 2 : 3;
    expect(answers.filter((s) => s === 401)).toHaveLength(wrongChecked);
    expect(answers.filter((s) => s === 429)).toHaveLength(97);
    // The wrong ones checked are the address's failures: at three it is refused on either gateway, at two it may try once more.
    expect(await list(replicas[0], 'wrong')).toBe(wrongChecked === 3 ? 429 : 401);
    expect(await list(replicas[1], 'right')).toBe(429);
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
