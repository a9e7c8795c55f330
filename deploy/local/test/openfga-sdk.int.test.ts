import { status } from '@grpc/grpc-js';
import { CredentialsMethod, FgaApiAuthenticationError, OpenFgaClient, type UsersetTree } from '@openfga/sdk';
import { authzV1 } from '@platform/proto';
import { callAsStranger } from '@platform/service-testing';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * OpenFGA's official JS SDK, unmodified, pointed at `<platform>/openfga` with a service account's token
 * (docs/grpc.md, "OpenFGA's SDKs"): it lists the store, reads the model, and its checks and lists agree with what
 * authz's public gRPC methods answer the same account, while another organization's objects are refused or left
 * out, a call without a token or with a person's token is refused, and writes stay the platform's.
 *
 * acme (owner olivia): team devs with mia, and the service account `checker`. globex (owner otto): team g with gus.
 */
describe("OpenFGA's JS SDK against the platform, as a service account", () => {
  let harness: TestPlatform;
  let ids: TestPlatform['ids'];
  let acme: number;
  let globex: number;
  let devs: number;
  let g: number;
  let token: string;
  let fga: OpenFgaClient;
  let storeId: string;

  const apiUrl = () => `${harness.platform.url}openfga`;
  const client = (opts: { token?: string; storeId?: string } = {}) =>
    new OpenFgaClient({
      apiUrl: apiUrl(),
      storeId: opts.storeId,
      ...(opts.token && { credentials: { method: CredentialsMethod.ApiToken, config: { token: opts.token } } }),
      // A refused call is answered at once: no retries to wait for.
      retryParams: { maxRetry: 0 },
    });
  /** authz's public gRPC method, called by the same service account with the same token. */
  const grpc = (method: string, request: unknown) =>
    callAsStranger(harness.grpcAddress('authz'), authzV1.AuthzServiceService, method, request, { authorization: `Bearer ${token}` });
  const grpcAnswer = async (method: string, request: unknown): Promise<any> => {
    const answer = await grpc(method, request);
    expect(answer).toMatchObject({ code: status.OK });
    return answer.response;
  };
  /** What a failed SDK call threw. */
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      (v) => Promise.reject(new Error(`answered ${JSON.stringify(v)}`)),
      (e: any) => e,
    );

  async function team(org: string, name: string, owner: string, members: string[]): Promise<number> {
    const created = await harness.api(owner, 'POST', `/orgs/${org}/teams`, { name, type: 'general', permission: 'read' });
    expect(created.status).toBe(201);
    for (const m of members) expect((await harness.api(owner, 'PUT', `/teams/${created.body.id}/members/${m}`)).status).toBe(204);
    return created.body.id;
  }

  beforeAll(async () => {
    harness = await bootTestPlatform({}, { apps: ['authz', 'orgs-teams'] });
    ids = harness.ids;
    for (const name of ['olivia', 'mia', 'otto', 'gus']) await harness.signUp(name);
    acme = (await harness.api('olivia', 'POST', '/orgs', { username: 'acme' })).body.id;
    globex = (await harness.api('otto', 'POST', '/orgs', { username: 'globex', visibility: 'private' })).body.id;
    devs = await team('acme', 'devs', 'olivia', ['mia']);
    g = await team('globex', 'g', 'otto', ['gus']);
    // The owner makes the service account and its token, as docs/service-accounts.md shows.
    const account = await harness.api('olivia', 'POST', '/orgs/acme/service-accounts', { name: 'checker' });
    expect(account.status).toBe(201);
    const minted = await harness.api('olivia', 'POST', `/orgs/acme/service-accounts/${account.body.id}/tokens`, { name: 'sdk' });
    expect(minted.status).toBe(201);
    token = minted.body.sha1;
  }, 120_000);
  afterAll(() => harness?.stop());

  it('lists the one store and gets it, then reads the latest model and that model by its id', async () => {
    const { stores } = await client({ token }).listStores();
    expect(stores).toEqual([
      {
        id: expect.stringMatching(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/),
        name: 'platform',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    storeId = stores[0].id;
    fga = client({ token, storeId });
    expect(await fga.getStore()).toMatchObject({ id: storeId, name: 'platform' });

    const { authorization_model: latest } = await fga.readLatestAuthorizationModel();
    expect(latest).toMatchObject({ id: expect.stringMatching(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/), schema_version: '1.1' });
    expect(latest!.type_definitions.map((t) => t.type)).toEqual(expect.arrayContaining(['user', 'organization', 'team', 'site']));
    const { authorization_model: byId } = await fga.readAuthorizationModel({ authorizationModelId: latest!.id });
    expect(byId).toEqual(latest);
  });

  it("answers Check as authz's Check answers the account, a model id named or not", async () => {
    for (const [user, expected] of [
      [`user:${ids.mia}`, true],
      [`user:${ids.gus}`, false],
    ] as const) {
      const tuple = { user, relation: 'member', object: `organization:${acme}` };
      const { allowed } = await fga.check(tuple);
      expect({ user, allowed }).toEqual({ user, allowed: expected });
      expect((await grpcAnswer('check', { tuple, contextualTuples: [] })).allowed).toBe(expected);
    }
    const { authorization_model } = await fga.readLatestAuthorizationModel();
    const pinned = client({ token, storeId });
    const asked = { user: `user:${ids.mia}`, relation: 'member', object: `team:${devs}` };
    expect((await pinned.check(asked, { authorizationModelId: authorization_model!.id })).allowed).toBe(true);
    // Another model id is no model of the store.
    const other = await failure(pinned.check(asked, { authorizationModelId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }));
    expect(other).toMatchObject({ statusCode: 400, apiErrorCode: 'authorization_model_not_found' });
  });

  it("refuses a check on another organization's object with 403, as authz's Check refuses it", async () => {
    const tuple = { user: `user:${ids.gus}`, relation: 'member', object: `organization:${globex}` };
    const refused = await failure(fga.check(tuple));
    expect(refused).toBeInstanceOf(FgaApiAuthenticationError);
    expect(refused).toMatchObject({
      statusCode: 403,
      responseData: { code: 'forbidden', message: expect.stringContaining(`organization:${globex}`) },
    });
    expect(await grpc('check', { tuple, contextualTuples: [] })).toMatchObject({ code: status.PERMISSION_DENIED });
    // Another organization's team, as a userset in the question, the same.
    const asUserset = await failure(fga.check({ user: `team:${g}#member`, relation: 'member', object: `organization:${acme}` }));
    expect(asUserset).toMatchObject({ statusCode: 403 });
  });

  it('answers batch checks, the server batch and the client-side one, as the single checks', async () => {
    const checks = [
      { user: `user:${ids.mia}`, relation: 'member', object: `organization:${acme}`, correlationId: 'mia' },
      { user: `user:${ids.gus}`, relation: 'member', object: `organization:${acme}`, correlationId: 'gus' },
      { user: `user:${ids.mia}`, relation: 'member', object: `team:${devs}`, correlationId: 'devs' },
    ];
    const { result } = await fga.batchCheck({ checks });
    expect(Object.fromEntries(result.map((r) => [r.correlationId, r.allowed]))).toEqual({ mia: true, gus: false, devs: true });
    const local = await fga.clientBatchCheck(checks.map(({ correlationId: _, ...c }) => c));
    // The SDK answers its single checks in the order they come back, not the order asked: each names its request.
    const asked = (r: { user: string; object: string }) => `${r.user} ${r.object}`;
    expect(Object.fromEntries(local.result.map((r) => [asked(r._request), r.allowed]))).toEqual({
      [asked(checks[0])]: true,
      [asked(checks[1])]: false,
      [asked(checks[2])]: true,
    });
    // One check of another organization refuses the batch, as authz's BatchCheck does.
    const withGlobex = [...checks, { user: `user:${ids.gus}`, relation: 'member', object: `organization:${globex}`, correlationId: 'g' }];
    expect(await failure(fga.batchCheck({ checks: withGlobex }))).toMatchObject({ statusCode: 403 });
    // A check authz finds invalid is answered with its own error, the others with their answers.
    const unknown = [
      checks[0],
      { user: `user:${ids.mia}`, relation: 'no_such_relation', object: `organization:${acme}`, correlationId: 'bad' },
    ];
    const mixed = await fga.batchCheck({ checks: unknown });
    const byId = Object.fromEntries(mixed.result.map((r) => [r.correlationId, r]));
    expect(byId.mia).toMatchObject({ allowed: true });
    expect(byId.bad).toMatchObject({ allowed: false, error: { input_error: 'validation_error', message: expect.any(String) } });
  });

  it("lists objects as authz's ListObjects does: never another organization's", async () => {
    for (const user of [`user:${ids.mia}`, `user:${ids.gus}`]) {
      const { objects } = await fga.listObjects({ user, relation: 'member', type: 'organization' });
      const own = await grpcAnswer('listObjects', {
        user,
        relation: 'member',
        type: 'organization',
        contextualTuples: [],
        contextJson: '',
      });
      expect(objects).toEqual(own.objects);
      expect(objects).not.toContain(`organization:${globex}`);
    }
    expect((await fga.listObjects({ user: `user:${ids.mia}`, relation: 'member', type: 'organization' })).objects).toEqual([
      `organization:${acme}`,
    ]);
    expect((await fga.listObjects({ user: `user:${ids.gus}`, relation: 'member', type: 'team' })).objects).toEqual([]);
    const streamed: string[] = [];
    for await (const { object } of fga.streamedListObjects({ user: `user:${ids.mia}`, relation: 'member', type: 'organization' }))
      streamed.push(object);
    expect(streamed).toEqual([`organization:${acme}`]);
  });

  it("lists users and expands as authz's ListUsers and Expand do, and refuses another organization's", async () => {
    const object = { type: 'organization', id: String(acme) };
    const { users } = await fga.listUsers({ object, relation: 'member', user_filters: [{ type: 'user' }] });
    const own = await grpcAnswer('listUsers', {
      object: `organization:${acme}`,
      relation: 'member',
      userFilters: [{ type: 'user', relation: '' }],
      contextualTuples: [],
      contextJson: '',
    });
    expect(users.map((u) => `${u.object!.type}:${u.object!.id}`).sort()).toEqual([...own.users].sort());
    expect(users).toContainEqual({ object: { type: 'user', id: String(ids.mia) } });
    expect(users).not.toContainEqual({ object: { type: 'user', id: String(ids.gus) } });
    const teams = await fga.listUsers({ object, relation: 'member', user_filters: [{ type: 'team', relation: 'member' }] });
    expect(teams.users).toContainEqual({ userset: { type: 'team', id: String(devs), relation: 'member' } });

    const { tree } = await fga.expand({ object: `organization:${acme}`, relation: 'member' });
    const expanded = await grpcAnswer('expand', { object: `organization:${acme}`, relation: 'member', contextualTuples: [] });
    expect(leaves(tree)).toEqual(grpcLeaves(expanded.tree));
    expect(leaves(tree)).toContainEqual(expect.arrayContaining([`team:${devs}#member`]));
    expect(tree!.root!.name).toBe(`organization:${acme}#member`);

    const globexObject = { type: 'organization', id: String(globex) };
    expect(await failure(fga.listUsers({ object: globexObject, relation: 'member', user_filters: [{ type: 'user' }] }))).toMatchObject({
      statusCode: 403,
    });
    expect(await failure(fga.expand({ object: `organization:${globex}`, relation: 'member' }))).toMatchObject({ statusCode: 403 });
  });

  it("reads the stored tuples of its organization as authz's ReadTuples does, and never another's", async () => {
    const { tuples } = await fga.read({ object: `team:${devs}` });
    const own = await grpcAnswer('readTuples', { object: `team:${devs}`, relation: '', user: '' });
    expect(tuples.map((t) => t.key)).toEqual(
      expect.arrayContaining(own.tuples.map(({ user, relation, object }: any) => ({ user, relation, object }))),
    );
    expect(tuples.map((t) => t.key)).toContainEqual({ user: `user:${ids.mia}`, relation: 'member', object: `team:${devs}` });
    // Paged: one tuple a page, every one once.
    const paged: unknown[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await fga.read({ object: `team:${devs}` }, { pageSize: 1, continuationToken });
      paged.push(...page.tuples.map((t) => t.key));
      continuationToken = page.continuation_token || undefined;
    } while (continuationToken);
    expect(paged).toEqual(tuples.map((t) => t.key));
    expect(await failure(fga.read({ object: `team:${g}` }))).toMatchObject({ statusCode: 403 });
    expect(await failure(fga.read())).toMatchObject({ statusCode: 403 });
  });

  it('refuses a call without a token, with a person’s token, with an unknown token, and names no store it does not have', async () => {
    for (const who of [
      client({ storeId }),
      client({ token: harness.tokens.olivia, storeId }),
      client({ token: 'f'.repeat(40), storeId }),
    ]) {
      const refused = await failure(who.check({ user: `user:${ids.mia}`, relation: 'member', object: `organization:${acme}` }));
      expect(refused).toBeInstanceOf(FgaApiAuthenticationError);
      expect(refused).toMatchObject({ statusCode: 401 });
    }
    expect(await failure(client().listStores())).toMatchObject({ statusCode: 401, responseData: { code: 'bearer_token_missing' } });
    const elsewhere = await failure(client({ token, storeId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }).getStore());
    expect(elsewhere).toMatchObject({ statusCode: 404, apiErrorCode: 'store_id_not_found' });
  });

  it("answers OpenFGA's errors over plain HTTP: what is wrong with a request only once the token is known", async () => {
    const post = async (path: string, body: string, bearer: string | undefined = token) => {
      const res = await fetch(`${apiUrl()}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(bearer && { authorization: `Bearer ${bearer}` }) },
        body,
      });
      return { status: res.status, body: (await res.json()) as { code: string; message: string } };
    };
    const check = `/stores/${storeId}/check`;
    const asked = JSON.stringify({ tuple_key: { user: `user:${ids.mia}`, relation: 'member', object: `organization:${acme}` } });
    expect(await post(check, asked)).toEqual({ status: 200, body: { allowed: true, resolution: '' } });
    expect(await post(check, '{"tuple_key":')).toMatchObject({ status: 400, body: { code: 'validation_error' } });
    expect(await post(check, JSON.stringify({ ...JSON.parse(asked), trace: true }))).toMatchObject({ status: 400 });
    const unknownField = await post(check, JSON.stringify({ ...JSON.parse(asked), extra: 1 }));
    expect(unknownField).toMatchObject({ status: 400, body: { code: 'validation_error', message: expect.stringContaining('extra') } });
    expect(await post('/stores/not-a-store/check', asked)).toMatchObject({ status: 400, body: { code: 'validation_error' } });
    expect(await post(`/stores/${storeId}/no-such-endpoint`, asked)).toMatchObject({ status: 404, body: { code: 'undefined_endpoint' } });
    // A bad request from a caller the platform does not know is refused for its token first.
    expect(await post(check, '{"tuple_key":', 'f'.repeat(40))).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect(await post('/stores/not-a-store/check', asked, '')).toMatchObject({
      status: 401,
      body: { code: 'bearer_token_missing' },
    });
  });

  it("refuses writes with 403 forbidden: relationships change through the platform's own API", async () => {
    const write = await failure(fga.write({ writes: [{ user: `user:${ids.gus}`, relation: 'member', object: `team:${devs}` }] }));
    expect(write).toMatchObject({ statusCode: 403, responseData: { code: 'forbidden' } });
    expect(await failure(fga.writeAuthorizationModel({ schema_version: '1.1', type_definitions: [{ type: 'user' }] }))).toMatchObject({
      statusCode: 403,
    });
    expect(await failure(fga.deleteStore())).toMatchObject({ statusCode: 403 });
    expect(await failure(client({ token }).createStore({ name: 'mine' }))).toMatchObject({ statusCode: 403 });
    // Nothing was written: gus is still no member of devs.
    expect((await fga.check({ user: `user:${ids.gus}`, relation: 'member', object: `team:${devs}` })).allowed).toBe(false);
  });
});

/** The users, computed usersets and tuple-to-usersets an expanded tree's leaves name, in order. */
function leaves(tree: UsersetTree | undefined): unknown[] {
  const walk = (node: any): unknown[] =>
    node.union
      ? node.union.nodes.flatMap(walk)
      : node.leaf
        ? [node.leaf.users?.users ?? node.leaf.computed?.userset ?? node.leaf.tupleToUserset?.computed.map((c: any) => c.userset)]
        : [];
  return walk(tree!.root);
}

/** The same of authz's tree. */
function grpcLeaves(tree: authzV1.UsersetTree): unknown[] {
  const walk = (node: authzV1.UsersetTree_Node): unknown[] => {
    const v = node.value;
    if (v?.$case === 'union') return v.value.nodes.flatMap(walk);
    if (v?.$case !== 'leaf') return [];
    const leaf = v.value.value;
    if (leaf?.$case === 'users') return [leaf.value.users];
    if (leaf?.$case === 'computed') return [leaf.value.userset];
    return [leaf?.$case === 'tupleToUserset' ? leaf.value.computed.map((c) => c.userset) : undefined];
  };
  return walk(tree.root!);
}
