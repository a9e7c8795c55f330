// A client of the platform that keeps calling while its pods are rolled: what a user's browser and another team's
// service do. Over HTTP through the gateway's Service (one keep-alive pool, as a browser or an SDK keeps), and over
// gRPC to authz's Service (one long-lived channel, as another team's service keeps). Every call's answer is checked;
// a call that fails (a wrong status, a reset connection, a gRPC error) is counted with what it got.
import { randomUUID } from 'node:crypto';
import { credentials, makeGenericClientConstructor, Metadata, type Client, type ServiceDefinition, type ServiceError } from '@grpc/grpc-js';
import { authzV1 } from '@platform/proto';

export interface Failure {
  what: string;
  got: string;
  at: number;
  /** The request id an HTTP call sent (x-request-id): every pod logs its lines about the call under it. */
  requestId?: string;
}

type Answer = { status: number; body: any; requestId?: string };

export class Traffic {
  calls = 0;
  readonly failures: Failure[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private round = 0;
  private readonly run = randomUUID().slice(0, 6);
  private adminToken = '';
  private serviceAccountToken = '';
  private orgId = 0;
  private grpcClient: (Client & Record<string, Function>) | undefined;

  constructor(
    /** The gateway's Service, `http://<address>:<port>`. */
    private readonly gateway: string,
    /** authz's Service, `<address>:<port>`. */
    private readonly authz: string,
    private readonly admin: { username: string; password: string },
  ) {}

  private async http(method: string, url: string, auth: string | undefined, json?: unknown): Promise<Answer> {
    // Our own request id, which the gateway takes and passes on to every backend it calls: a failed call's lines can
    // then be found in every pod's log.
    const requestId = randomUUID();
    const headers: Record<string, string> = { 'x-request-id': requestId };
    if (auth) headers.authorization = auth;
    const form = json instanceof FormData;
    if (json !== undefined && !form) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.gateway}/api/v1${url}`, {
      method,
      headers,
      body: json === undefined ? undefined : form ? json : JSON.stringify(json),
      signal: AbortSignal.timeout(30_000),
    }).catch((err: Error) => {
      throw Object.assign(err, { requestId });
    });
    const text = await res.text();
    return {
      status: res.status,
      body: (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text,
      requestId,
    };
  }

  /** One call, expected to answer `expected`: its body, or undefined after counting it failed. */
  private async expect(what: string, expected: number, call: () => Promise<Answer>): Promise<any> {
    this.calls++;
    try {
      const answer = await call();
      if (answer.status === expected) return answer.body;
      this.fail(what, `${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`, answer.requestId);
    } catch (err) {
      this.fail(
        what,
        `${(err as Error).message}${(err as { cause?: Error }).cause ? `: ${(err as { cause: Error }).cause.message}` : ''}`,
        (err as { requestId?: string }).requestId,
      );
    }
    return undefined;
  }

  private fail(what: string, got: string, requestId?: string): void {
    this.failures.push({ what, got, at: Date.now(), requestId });
  }

  /** What the rounds need: the admin's token, a user, an organization, a contract to license from, a service account. */
  async setUp(): Promise<void> {
    const { username, password } = this.admin;
    const basic = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    // Each failure names its call and how long it took: a call that ran into its 30 s timeout said only "aborted".
    const must = async (what: string, expected: number, call: Promise<Answer>) => {
      const began = Date.now();
      const answer = await call.catch((err: Error) => {
        throw new Error(`${what}: ${err.message} after ${((Date.now() - began) / 1000).toFixed(1)} s`);
      });
      if (answer.status !== expected) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
      return answer.body;
    };
    const token = await must(
      "the admin's token",
      201,
      this.http('POST', `/users/${username}/tokens`, basic, { name: `rollout-${this.run}` }),
    );
    this.adminToken = `token ${token.sha1}`;
    await must(
      'a user',
      201,
      this.http('POST', '/admin/users', this.adminToken, {
        username: 'rollout-user',
        email: 'rollout@example.com',
        password: 'rollout-password',
      }),
    );
    const org = await must('an organization', 201, this.http('POST', '/orgs', this.adminToken, { username: `rollout-${this.run}` }));
    this.orgId = org.id;
    // A contract of the admin's own account that takes on any new cluster, so that each round issues a license.
    const form = new FormData();
    for (const [k, v] of Object.entries({
      products: 'productdb',
      end: String(Math.floor(Date.now() / 1000) + 365 * 86_400),
      features: JSON.stringify(['postgres']),
      allowOffline: 'true',
      autoAssignCluster: 'true',
    }))
      form.set(k, v);
    await must('a contract', 201, this.http('POST', `/contracts?org=${username}`, this.adminToken, form));
    const sa = await must(
      'a service account',
      201,
      this.http('POST', `/orgs/rollout-${this.run}/service-accounts`, this.adminToken, { name: 'checker' }),
    );
    const saToken = await must(
      "the service account's token",
      201,
      this.http('POST', `/orgs/rollout-${this.run}/service-accounts/${sa.id}/tokens`, this.adminToken, { name: 'rollout' }),
    );
    this.serviceAccountToken = saToken.sha1;
    const Ctor = makeGenericClientConstructor(authzV1.AuthzServiceService as unknown as ServiceDefinition, 'AuthzService');
    this.grpcClient = new Ctor(this.authz, credentials.createInsecure()) as Client & Record<string, Function>;
  }

  /** One round of a user's and a service's calls. */
  private async once(): Promise<void> {
    const n = `${this.run}-${this.round++}`;
    const basic = `Basic ${Buffer.from('rollout-user:rollout-password').toString('base64')}`;
    await this.expect('sign in (POST /user/session)', 201, () => this.http('POST', '/user/session', basic));
    const org = `o-${n}`;
    await this.expect('POST /orgs', 201, () => this.http('POST', '/orgs', this.adminToken, { username: org }));
    await this.expect('GET /orgs/{org}', 200, () => this.http('GET', `/orgs/${org}`, this.adminToken));
    await this.expect('POST /orgs/{org}/teams', 201, () => this.http('POST', `/orgs/${org}/teams`, this.adminToken, { name: 'ops' }));
    await this.expect('GET /orgs/{org}/teams', 200, () => this.http('GET', `/orgs/${org}/teams`, this.adminToken));
    await this.expect('POST /users/{user}/tokens', 201, () => this.http('POST', '/users/rollout-user/tokens', basic, { name: `t-${n}` }));
    await this.expect('POST /license/issue', 200, () => this.http('POST', '/license/issue', this.adminToken, { cluster: randomUUID() }));
    await this.expect('gRPC Check by a service account', 0, () => this.check());
  }

  /** authz's Check by the service account on its own organization: status 0 (OK) with an answer. */
  private check(): Promise<Answer> {
    const md = new Metadata();
    md.set('authorization', `Bearer ${this.serviceAccountToken}`);
    const request = { tuple: { user: 'user:1', relation: 'member', object: `organization:${this.orgId}` }, contextualTuples: [] };
    return new Promise((resolve) =>
      this.grpcClient!.check(request, md, { deadline: Date.now() + 30_000 }, (err: ServiceError | null, res: unknown) =>
        resolve(err ? { status: err.code, body: err.details } : { status: 0, body: res }),
      ),
    );
  }

  /** Rounds, `workers` at a time, until stopped. */
  start(workers = 2): void {
    this.running = true;
    this.loops = Array.from({ length: workers }, async () => {
      while (this.running) await this.once();
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.grpcClient?.close();
  }
}
