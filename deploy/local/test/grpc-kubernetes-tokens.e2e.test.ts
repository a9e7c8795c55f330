/**
 * A team's pod calling authz's Check over gRPC with its own Kubernetes ServiceAccount token, as docs/grpc.md tells it
 * to: an organization's owner makes a service account, a site admin binds it to `team-billing/billing-worker`, and
 * the pod's projected token (a JWT the cluster vouches for through TokenReview: here a stand-in API server) is its
 * credential. No secret is handed over.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { authzV1, orgsTeamsOrgsV1 } from '@platform/proto';
import { callAsStranger } from '@platform/service-testing';
import { bootTestPlatform, type TestPlatform } from './harness';

const AUDIENCE = 'platformadmin';
const POD = 'system:serviceaccount:team-billing:billing-worker';

/** A projected ServiceAccount token as the kubelet mounts it (a JWT; only the API server reads its signature). */
function projectedToken(sub: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'RS256', kid: 'cluster' })}.${part({ iss: 'https://kubernetes.default.svc', sub, aud: [AUDIENCE], iat: now, exp: now + 3600 })}.${'s'.repeat(43)}`;
}

describe('Check over gRPC with a pod’s own Kubernetes ServiceAccount token', () => {
  let t: TestPlatform;
  let cluster: http.Server;
  /** The tokens the stand-in API server vouches for, and whom each names. */
  const vouched = new Map<string, string>();
  const podToken = projectedToken(POD);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grpc-kubernetes-'));

  beforeAll(async () => {
    vouched.set(podToken, POD);
    cluster = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const review = JSON.parse(body) as { spec: { token: string; audiences: string[] } };
        const username = vouched.get(review.spec.token);
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            status: username ? { authenticated: true, user: { username }, audiences: review.spec.audiences } : { authenticated: false },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => cluster.listen(0, '127.0.0.1', resolve));
    fs.writeFileSync(path.join(dir, 'token'), 'orgs-teams-own-token\n');
    t = await bootTestPlatform({
      KUBERNETES_TOKEN_AUDIENCE: AUDIENCE,
      KUBERNETES_API_URL: `http://127.0.0.1:${(cluster.address() as AddressInfo).port}`,
      KUBERNETES_API_TOKEN_FILE: path.join(dir, 'token'),
    });
    await t.signUp('owner');
    await t.signUp('dev');
    expect((await t.api('owner', 'POST', '/orgs', { username: 'acme', visibility: 'private' })).status).toBe(201);
    const team = await t.api('owner', 'POST', '/orgs/acme/teams', { name: 'devs', type: 'general' });
    expect((await t.api('owner', 'PUT', `/teams/${team.body.id}/members/dev`)).status).toBe(204);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    cluster?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers the pod once a site admin binds its ServiceAccount, and no more once unbound', async () => {
    const acme = (await t.api('owner', 'GET', '/orgs/acme')).body.id as number;
    const check = { tuple: { user: `user:${t.ids.dev}`, relation: 'member', object: `organization:${acme}` }, contextualTuples: [] };
    const asPod = { authorization: `Bearer ${podToken}` };
    const authz = t.grpcAddress('authz');

    // The owner makes the account; only a site admin binds the pod's ServiceAccount to it.
    const account = await t.api('owner', 'POST', '/orgs/acme/service-accounts', { name: 'billing-worker' });
    expect(account.status).toBe(201);
    const bind = { kubernetes_subjects: ['team-billing/billing-worker'] };
    expect((await t.api('owner', 'PATCH', `/orgs/acme/service-accounts/${account.body.id}`, bind)).status).toBe(403);
    // Not bound yet: the cluster vouches for the pod, but it is nobody here.
    expect((await callAsStranger(authz, authzV1.AuthzServiceService, 'check', check, asPod)).code).toBe(status.UNAUTHENTICATED);
    expect((await t.api('root', 'PATCH', `/orgs/acme/service-accounts/${account.body.id}`, bind)).status).toBe(200);

    expect(await callAsStranger(authz, authzV1.AuthzServiceService, 'check', check, asPod)).toMatchObject({
      code: status.OK,
      response: { allowed: true },
    });
    const org = await callAsStranger(t.grpcAddress('orgs-teams'), orgsTeamsOrgsV1.OrganizationsServiceService, 'getOrg', { name: 'acme', viewerId: 0 }, asPod);
    expect(org).toMatchObject({ code: status.OK, response: { username: 'acme' } });
    // Outside what it holds, and internal methods: refused.
    const siteCheck = { tuple: { user: `user:${t.ids.dev}`, relation: 'admin', object: 'site:platform' }, contextualTuples: [] };
    expect((await callAsStranger(authz, authzV1.AuthzServiceService, 'check', siteCheck, asPod)).code).toBe(status.PERMISSION_DENIED);
    expect((await callAsStranger(authz, authzV1.AuthzServiceService, 'readTuples', {}, asPod)).code).toBe(status.PERMISSION_DENIED);
    // A token the cluster does not vouch for, and one for another pod.
    const stranger = { authorization: `Bearer ${projectedToken('system:serviceaccount:team-b:other')}` };
    expect((await callAsStranger(authz, authzV1.AuthzServiceService, 'check', check, stranger)).code).toBe(status.UNAUTHENTICATED);

    // Unbound: the very next call is refused.
    expect((await t.api('root', 'PATCH', `/orgs/acme/service-accounts/${account.body.id}`, { kubernetes_subjects: [] })).status).toBe(200);
    expect((await callAsStranger(authz, authzV1.AuthzServiceService, 'check', check, asPod)).code).toBe(status.UNAUTHENTICATED);
  });
});
