import { startTestGateway } from './test-gateway';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { NotAuthenticatedError } from '@platform/errors';
import { orgsTeamsV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer, type RunningGrpcServer } from '@platform/service-kit';
import { eventually } from '@platform/testing';

// What the edge owns whatever the route: malformed requests are 4xx with the error body (never 500, never
// an error-level log line), and every request leaves one access-log line without secrets.

describe('the edge', () => {
  let base: string;
  let backend: RunningGrpcServer;
  let close: () => void;
  const lines: Record<string, unknown>[] = [];
  /** The `user:password` pairs the gateway asked orgs-teams to check. */
  const basicSignIns: string[] = [];

  beforeAll(async () => {
    backend = await startGrpcServer({
      name: 'orgs-teams',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(orgsTeamsV1.OrgsTeamsServiceService, {
          getVersion: async () => ({ version: '1.2.3', service: 'orgs-teams' }),
          authenticateBasic: async ({ username, password }: { username: string; password: string }) => {
            basicSignIns.push(`${username}:${password}`);
            if (username !== 'alice' || password !== 'right-password') throw new NotAuthenticatedError('invalid username or password');
            return orgsTeamsV1.AuthenticateResponse.fromPartial({ user: { id: 7, login: 'alice', active: true } });
          },
          listTokens: async () => ({ tokens: [] }),
          authenticate: async ({ token }: { token: string }) => {
            if (token !== 'alices-token') throw new NotAuthenticatedError('invalid token');
            return orgsTeamsV1.AuthenticateResponse.fromPartial({ user: { id: 7, login: 'alice', active: true }, tokenId: 1 });
          },
        } as never),
      ],
      protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto'],
      log: createLogger('stub', 'silent'),
    });
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    ({ base, close } = await startTestGateway({ ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${backend.port}` }, pino({ level: 'info' }, sink)));
  });
  afterAll(async () => {
    close?.();
    await backend?.shutdown(100);
  });

  /** The access lines once `n` have been written (each when its response was sent, not when the client read it). */
  const accessLines = async (n: number) => {
    const requests = () => lines.filter((l) => l.msg === 'request');
    await eventually(async () => requests().length >= n, 10_000, 5);
    return requests();
  };

  const errorBody = (message: string | RegExp) => ({
    message: typeof message === 'string' ? message : expect.stringMatching(message),
    // On the public URL (unset here: this machine at the default HTTP port), not on the host the request named.
    url: 'http://localhost:8080/api/v1/openapi.json',
  });

  it('answers a path that is not validly percent-encoded with 400, not 500', async () => {
    const res = await fetch(`${base}/api/v1/orgs/%FF`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(errorBody('the path is not validly percent-encoded'));
  });

  it('answers a body whose Content-Encoding does not decode with 400, and an unknown encoding with 415', async () => {
    const garbage = await fetch(`${base}/api/v1/orgs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: Buffer.from('this is not gzip'),
    });
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toEqual(errorBody('the request body could not be read'));
    const unknown = await fetch(`${base}/api/v1/orgs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'x-nonsense' },
      body: gzipSync('{}'),
    });
    expect(unknown.status).toBe(415);
  });

  it('puts message and url in every error body, unknown routes included', async () => {
    const res = await fetch(`${base}/api/v1/no/such/thing`);
    expect([res.status, await res.json()]).toEqual([404, errorBody('no route for GET /api/v1/no/such/thing')]);
    const anonymous = await fetch(`${base}/api/v1/user`);
    expect([anonymous.status, await anonymous.json()]).toEqual([401, errorBody('token is required')]);
  });

  it('takes only canonical base64 of user:password in Basic credentials: other spellings are 401 and never reach orgs-teams', async () => {
    const tokens = (encoded: string) => fetch(`${base}/api/v1/users/alice/tokens`, { headers: { authorization: `Basic ${encoded}` } });
    const canonical = Buffer.from('alice:right-password').toString('base64');
    expect(canonical.endsWith('=')).toBe(true);
    basicSignIns.length = 0;
    for (const spelling of [
      `${canonical}junk`, // Node's decoder stops at the padding and ignores the rest
      `${canonical}=`,
      canonical.replace(/=+$/, ''), // unpadded
      `${canonical.slice(0, 8)}*${canonical.slice(8)}`, // a character outside the alphabet, which Node skips
      'YWxpY2U6cmlnaHQtcGFzc3dvcmR=', // the same bytes with non-zero spare bits in the last character
      Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64'), // not UTF-8
    ]) {
      const res = await tokens(spelling);
      expect([spelling, res.status, ((await res.json()) as { message: string }).message]).toEqual([
        spelling,
        401,
        'malformed basic credentials',
      ]);
    }
    expect(basicSignIns).toEqual([]);
    // The canonical spelling signs in.
    const ok = await tokens(canonical);
    expect(ok.status).toBe(200);
    expect(basicSignIns).toEqual(['alice:right-password']);
  });

  it('writes one access-log line per request: row path, status, duration, request id; no token, no error level', async () => {
    lines.length = 0;
    const res = await fetch(`${base}/api/v1/version`, { headers: { 'x-request-id': 'trace-me-1' } });
    expect(res.status).toBe(200);
    await fetch(`${base}/api/v1/orgs/%FF`);
    await fetch(`${base}/api/v1/no/route?token=very-secret-token`, { headers: { authorization: 'token very-secret-token' } });
    // A line is written when the server has finished sending, which may come after the client has its answer.
    const requests = await accessLines(3);
    expect(requests).toEqual([
      expect.objectContaining({ requestId: 'trace-me-1', method: 'GET', route: '/version', status: 200, durationMs: expect.any(Number) }),
      // The path could not be decoded, so no row matched it.
      expect.objectContaining({ method: 'GET', route: 'unmatched', status: 400 }),
      expect.objectContaining({ method: 'GET', route: 'unmatched', status: 404 }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('very-secret-token');
    // A malformed request is the client's: no error-level line, no stack.
    expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });

  it('names the client and the user in the access line, and a refused sign-in’s login at warn level, never its password', async () => {
    lines.length = 0;
    await fetch(`${base}/api/v1/users/alice/tokens`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('alice:wrong-password').toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    await fetch(`${base}/api/v1/user`, { headers: { authorization: 'token alices-token' } });
    const requests = await accessLines(2);
    expect(requests).toEqual([
      expect.objectContaining({ status: 401, login: 'alice', client: '127.0.0.1', level: 40 }),
      expect.objectContaining({ route: '/user', user: 'alice', client: '127.0.0.1' }),
    ]);
    expect(requests[1]).not.toHaveProperty('login');
    expect(JSON.stringify(lines)).not.toContain('wrong-password');
  });
});
