import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { NotFoundError } from '@platform/errors';
import { createLogger, loadConfig } from '@platform/service-kit';
import type { Backends } from '../src/backends';
import { gatewayEnv } from '../src/config';
import { createGatewayHttp } from '../src/http';
import { sectionRoutes, type ObjectResolver, type Route, type Target } from '../src/route';

// How the edge checks what a row declares (route.ts, Requirement): requirements before the query and body are read,
// in the order written, the target looked up only when the first requirement naming it is reached; checks after
// the body; an alternative (a site admin's fallback) lets a request through when any of its parts holds; and what
// a refused caller is told. A stand-in authz answers from the sets below, and the test sees what was asked.

const route = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });

/** Permissions (`name@object`) and relations (`relation@type:id`) alice holds. */
const held = new Set<string>();
const asked: string[] = [];

const backends = {
  orgsTeams: {
    identity: {
      authenticate: async ({ token }: { token: string }) => ({ user: { id: 1, login: token, active: true }, scope: '', scopeAccountId: 0, accessScopes: ['all'] }),
    },
  },
  authz: {
    authz: {
      checkPermission: async ({ permission, objectId }: { permission: string; objectId: number }) => {
        asked.push(`${permission}@${objectId}`);
        return { allowed: held.has(`${permission}@${objectId}`), dependsOn: [] };
      },
      check: async ({ tuple, contextualTuples }: { tuple: { relation: string; object: string }; contextualTuples: { user: string }[] }) => {
        asked.push(`${tuple.relation}@${tuple.object}${contextualTuples.map((t) => ` given ${t.user}`).join('')}`);
        return { allowed: held.has(`${tuple.relation}@${tuple.object}`), dependsOn: [] };
      },
    },
  },
} as unknown as Backends;

/** Boxes: `secret` exists, every other name is 404. Its authz id is its label. */
const boxInPath: Target<'organization', { id: number; label: string }, { box: string }> = {
  type: 'organization',
  describe: 'box `{box}`',
  async resolve({ box }) {
    asked.push(`resolve ${box}`);
    if (box !== 'secret') throw new NotFoundError(`no box ${box}`);
    return { id: 7, label: 'b7' };
  },
  id: (box) => box.id,
  authzId: (box) => box.label,
};

/** The shelf a box is on, with its owner handed to authz for this check. */
const shelf: ObjectResolver<unknown, unknown> = {
  describe: 'the shelf',
  resolve: async () => ({ type: 'shelf', id: 's1', contextualTuples: [{ user: 'user:9', relation: 'owner', object: 'shelf:s1' }] }),
};

const ROWS: Route[] = [
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/boxes/:box',
    summary: 'A box: the shelf is checked before the box is looked up',
    auth: 'token',
    params: z.object({ box: z.string() }),
    target: boxInPath,
    requires: [
      { on: shelf, relation: 'stock' },
      {
        anyOf: [
          { on: 'target', relation: 'open' },
          { on: 'site', permission: 'admin:site' },
        ],
        denied: (_i, { target }) => `box ${target.label} is shut`,
      },
    ],
    response: { status: 200 },
    handle: async () => ({}),
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/boxes/:box/give',
    summary: 'Give from a box: uid must be the caller, or the caller holds edit:org on it',
    auth: 'token',
    params: z.object({ box: z.string() }),
    query: z.object({ uid: z.coerce.number() }),
    body: { schema: z.object({ what: z.string() }) },
    target: boxInPath,
    checks: [
      {
        anyOf: [
          { check: 'uid is the caller', holds: ({ query }, { caller }) => query.uid === caller.id, denied: 'not you' },
          { on: 'target', permission: 'edit:org' },
        ],
      },
    ],
    response: { status: 200 },
    audit: false,
    handle: async () => ({}),
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/hook',
    summary: 'A hook whose refusal reads as not authenticated',
    auth: 'token',
    checks: [{ check: 'the caller is bob', status: 401, holds: (_i, { caller }) => caller.login === 'bob', denied: 'only bob' }],
    response: { status: 200 },
    handle: async () => ({}),
  }),
];

describe('requirements and checks at the edge', () => {
  let base: string;
  let server: http.Server;

  beforeAll(async () => {
    const config = loadConfig(gatewayEnv, { LOG_LEVEL: 'silent' });
    server = http.createServer(createGatewayHttp({ routes: ROWS, backends, config, log: createLogger('test', 'silent') }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(() => server.close());
  beforeEach(() => {
    held.clear();
    asked.length = 0;
  });

  const call = async (method: string, path: string, as = 'alice', body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `token ${as}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, message: ((await res.json().catch(() => ({}))) as { message?: string }).message };
  };

  it('checks a requirement written before the first one on the target before looking the target up', async () => {
    expect(await call('GET', '/boxes/unknown')).toEqual({ status: 403, message: 'you do not have the stock relation' });
    expect(asked).toEqual(['stock@shelf:s1 given user:9']);
    held.add('stock@shelf:s1');
    expect((await call('GET', '/boxes/unknown')).status).toBe(404);
  });

  it('lets an alternative through and refuses with the alternatives’ own message when none holds', async () => {
    held.add('stock@shelf:s1');
    expect(await call('GET', '/boxes/secret')).toEqual({ status: 403, message: 'box b7 is shut' });
    expect(asked).toEqual(['stock@shelf:s1 given user:9', 'resolve secret', 'open@organization:b7', 'admin:site@0']);
    held.add('admin:site@0');
    expect((await call('GET', '/boxes/secret')).status).toBe(200);
    held.delete('admin:site@0');
    held.add('open@organization:b7');
    expect((await call('GET', '/boxes/secret')).status).toBe(200);
  });

  it('makes the checks after the query and body are read, refusing with the last alternative’s refusal', async () => {
    expect((await call('POST', '/boxes/secret/give?uid=2', 'alice', { what: 3 })).status).toBe(422);
    expect(await call('POST', '/boxes/secret/give?uid=2', 'alice', { what: 'x' })).toEqual({
      status: 403,
      message: 'you do not have the edit:org permission',
    });
    expect((await call('POST', '/boxes/secret/give?uid=1', 'alice', { what: 'x' })).status).toBe(200);
    held.add('edit:org@7');
    expect((await call('POST', '/boxes/secret/give?uid=2', 'alice', { what: 'x' })).status).toBe(200);
  });

  it('answers 401 for a check that says so', async () => {
    expect(await call('GET', '/hook')).toEqual({ status: 401, message: 'only bob' });
    expect((await call('GET', '/hook', 'bob')).status).toBe(200);
  });
});
