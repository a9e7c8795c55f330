import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BILLING_CHANGED } from '@platform/bus';
import { contractsV1, licensingV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { eventually } from '@platform/testing';
import { basic, formOf, bootTestPlatform, type TestPlatform } from './harness';
import { ROOT } from './launcher';

/**
 * A license's life across the apps (docs/licensing.md): issued for a cluster bound to a contract (admin and user rows),
 * for a cluster from the caller's own contracts (`POST /license/issue`), through a license proxy while its maker may
 * issue, verified at `POST /register`, kept to the tenant that enrolled the cluster once the clusters app has it,
 * shown on the billing dashboard, and, once the contract is revoked, on the published revocation list and refused by
 * `/register` and by the command-line verifier. Read back with Node's X.509 implementation, not the library that
 * built them. The rows' statuses for each caller are in the unit tier (apps/gateway/test/license-*.test.ts,
 * licensed-dashboard.test.ts), contracts-licensing's rules in its integration tests.
 */

const NOW = Math.floor(Date.now() / 1000);
const YEAR = 365 * 24 * 3600;
const HUB = '55555555-aaaa-4aaa-8aaa-555555555555';
const OFFLINE = '66666666-aaaa-4aaa-8aaa-666666666666';

/**
 * The license with the first byte inside one extension's value flipped (`oid` 2.5.29.<last>): the certificate is
 * still framed right, but that extension no longer decodes.
 */
function corruptExtension(der: Buffer, last: number): Buffer {
  let at = der.indexOf(Buffer.from([0x06, 0x03, 0x55, 0x1d, last])) + 5;
  if (at < 5) throw new Error(`the license has no extension 2.5.29.${last}`);
  if (der[at] === 0x01) at += 3; // critical: TRUE
  if (der[at] !== 0x04 || der[at + 1] > 0x7f) throw new Error(`extension 2.5.29.${last} is not a short OCTET STRING`);
  const corrupted = Buffer.from(der);
  corrupted[at + 2] ^= 0xff;
  return corrupted;
}

describe('licenses over HTTP (issue-license of contracts, license registration) on a hosted deployment', () => {
  let t: TestPlatform;
  const api: TestPlatform['api'] = (...args) => t.api(...args);
  let contractId: number;
  let ccId: number;
  let serial: string;
  let license: string;

  const createContract = async (org: string | undefined, fields: Record<string, string>) => {
    const created = await t.send(
      'root',
      'POST',
      `/contracts${org ? `?org=${org}` : ''}`,
      formOf({ products: 'productdb', end: String(NOW + YEAR), ...fields }),
    );
    expect(created.status).toBe(201);
    return created.body[0].id as number;
  };
  const bytes = async (p: string) => {
    const res = await fetch(`${t.platform.url}api/v1${p}`);
    return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
  };

  beforeAll(async () => {
    // Billing enabled for the dashboard's licensed rows, which read the licenses and contracts kept here.
    t = await bootTestPlatform({ DEPLOYMENT_TYPE: 'Hosted', BILLING_ENABLED: 'true' });
    for (const who of ['olivia', 'mia', 'solo']) await t.signUp(who);
    expect((await api('olivia', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
    expect((await api('olivia', 'POST', '/orgs/acme/clusters', { name: 'prod', uid: HUB })).status).toBe(201);
    contractId = await createContract('acme', { features: JSON.stringify(['postgres', 'mysql']), disableAnalytics: 'true' });
    const bound = await api('root', 'POST', `/contracts/${contractId}/clusters?org=acme`, [{ cluster: HUB }, { cluster: OFFLINE }]);
    expect(bound.status).toBe(201);
    ccId = (bound.body as { id: number; cluster: string }[]).find((c) => c.cluster === HUB)!.id;
  }, 120_000);
  afterAll(() => t?.stop());

  it('issues a license for a bound cluster (site admin): every field as the product reads it', async () => {
    const issued = await api('root', 'POST', `/contracts/${contractId}/clusters/${ccId}/issue-license`);
    expect(issued.status).toBe(200);
    expect(issued.body.contract.id).toBe(contractId);
    expect(new Date(issued.body.contract.expiryTimestamp).getTime() / 1000).toBe(NOW + YEAR);
    license = issued.body.license;
    const cert = new X509Certificate(Buffer.from(license, 'base64'));
    const ca = new X509Certificate((await bytes('/licenses/ca')).body);
    expect(cert.checkIssued(ca) && cert.verify(ca.publicKey)).toBe(true);
    expect(cert.subject.split('\n')).toEqual(
      expect.arrayContaining([
        `CN=${HUB}`,
        'C=productdb',
        'O=postgres',
        'O=mysql',
        'ST=enterprise',
        'OU=productdb-enterprise',
        'L=DisableAnalytics=true',
        'L=EnableClientBilling=false',
      ]),
    );
    expect(cert.subjectAltName).toMatch(new RegExp(`^DNS:${HUB}, email:`));
    // Node names the extended key usages keyUsage: clientAuth only.
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(new Date(cert.validTo).getTime() / 1000).toBe(NOW + YEAR);
    serial = BigInt(`0x${cert.serialNumber}`).toString();
    expect(BigInt(serial)).toBeGreaterThan(0n);
    expect(BigInt(serial)).toBeLessThan(2n ** 63n);
    const events = ((await api('root', 'GET', `/contracts/${contractId}/audit`)).body as { event: string }[]).map((e) => e.event);
    expect(events).toContain(`license-issued: ${serial} for ${HUB}`);
  });

  it('issues for the account (user row) with issue-license:cluster; refuses a member without it, a stranger and an offline license', async () => {
    const path = `/user/contracts/${contractId}/clusters/${ccId}/issue-license?org=acme`;
    expect((await api('olivia', 'POST', path)).status).toBe(200);
    expect((await api('solo', 'POST', path)).status).toBe(403);
    expect((await api(undefined, 'POST', path)).status).toBe(401);
    const offline = ((await api('root', 'GET', `/contracts/${contractId}/clusters`)).body as { id: number; cluster: string }[]).find(
      (c) => c.cluster === OFFLINE,
    )!;
    const refused = await api('root', 'POST', `/contracts/${contractId}/clusters/${offline.id}/issue-license`);
    expect(refused.status).toBe(405);
    expect(refused.body.message).toMatch(/offline/);
    expect((await api('root', 'POST', `/contracts/${contractId}/clusters/999999/issue-license`)).status).toBe(404);
  });

  it('issues from the caller’s own contract by cluster (POST /license/issue): 422 without a UUID, 404 with no contract', async () => {
    // A contract of root's own account that allows offline licenses and takes new clusters on by itself.
    const own = await createContract(undefined, { allowOffline: 'true', autoAssignCluster: 'true' });
    expect((await api('root', 'POST', '/license/issue', { cluster: 'not-a-uuid' })).status).toBe(422);
    expect((await api('root', 'POST', '/license/issue', {})).status).toBe(422);
    const issued = await api('root', 'POST', '/license/issue', { cluster: OFFLINE, features: ['postgres'] });
    expect(issued.status).toBe(200);
    expect(issued.body.contract.id).toBe(own);
    expect(new X509Certificate(Buffer.from(issued.body.license, 'base64')).subject).toContain('L=AllowOffline=true');
    // Auto-assigned: the cluster is now bound to that contract.
    expect(((await api('root', 'GET', `/contracts/${own}/clusters`)).body as { cluster: string }[]).map((c) => c.cluster)).toEqual([
      OFFLINE,
    ]);
    expect((await api('mia', 'POST', '/license/issue', { cluster: HUB })).status).toBe(404);
  });

  it('lets a site admin make a contract for a user’s own account (org names the user), which that user’s /license/issue reaches', async () => {
    const forSolo = await createContract('solo', { allowOffline: 'true', autoAssignCluster: 'true' });
    const listed = (await api('solo', 'GET', '/user/contracts')).body as { id: number; orgOrUser: string; uid: number }[];
    expect(listed.map((c) => [c.id, c.orgOrUser, c.uid])).toEqual([[forSolo, 'solo', t.ids.solo]]);
    const issued = await api('solo', 'POST', '/license/issue', { cluster: '77777777-aaaa-4aaa-8aaa-777777777777' });
    expect(issued.status).toBe(200);
    expect(issued.body.contract.id).toBe(forSolo);
    expect((await api('root', 'GET', '/contracts?org=nobody-by-that-name')).status).toBe(404);
  });

  it('issues from an organization’s contract by cluster with `org` (POST /license/issue?org=) for who may issue its licenses', async () => {
    const issued = await api('olivia', 'POST', '/license/issue?org=acme', { cluster: HUB, features: ['postgres'] });
    expect(issued.status).toBe(200);
    expect(issued.body.contract.id).toBe(contractId);
    // mia is no member of acme; solo's own account has no contract for the hub either way.
    expect((await api('mia', 'POST', '/license/issue?org=acme', { cluster: HUB })).status).toBe(403);
    expect((await api('solo', 'POST', '/license/issue?org=acme', { cluster: HUB })).status).toBe(403);
  });

  it('issues without `org` from the caller’s own contracts and those of the organizations it may issue the cluster’s licenses for', async () => {
    // olivia owns acme: its contract binding the hub answers her, as the contract route would.
    const issued = await api('olivia', 'POST', '/license/issue', { cluster: HUB, features: ['postgres'] });
    expect(issued.status).toBe(200);
    expect(issued.body.contract.id).toBe(contractId);
    // A member of acme without issue-license: not acme's contracts; its own one that takes clusters on does not get acme's
    // hub either (the hub is acme's), so no contract covers it.
    const readers = await api('olivia', 'POST', '/orgs/acme/teams', { name: 'readers', permission: 'read' });
    expect((await api('olivia', 'PUT', `/teams/${readers.body.id}/members/solo`)).status).toBe(204);
    const refused = await api('solo', 'POST', '/license/issue', { cluster: HUB });
    expect(refused).toMatchObject({ status: 404, body: { message: `no active contract of the account covers cluster ${HUB}` } });
    expect((await api('solo', 'POST', '/license/issue?org=acme', { cluster: HUB })).status).toBe(403);
    // mia is in no organization: her own contracts only (none).
    expect((await api('mia', 'POST', '/license/issue', { cluster: HUB })).status).toBe(404);
  });

  it('a license proxy made by a holder of issue-license through a custom role issues until the role is taken or its token deleted, each seen on the very next request', async () => {
    // mia joins acme in a team that carries no role yet: no proxy for her.
    const team = await api('olivia', 'POST', '/orgs/acme/teams', { name: 'licensers', type: 'general' });
    expect(team.status).toBe(201);
    expect((await api('olivia', 'PUT', `/teams/${team.body.id}/members/mia`)).status).toBe(204);
    expect((await api('mia', 'POST', '/user/license-proxy?org=acme', {})).status).toBe(403);
    const role = await api('olivia', 'POST', '/authz/roles?org=acme', {
      name: 'licensers',
      permissions: [{ namespace: 'cluster', action: 'issue-license' }],
    });
    expect(role.status).toBe(201);
    const assign = (ids: number[]) => api('olivia', 'PATCH', `/teams/${team.body.id}`, { name: 'licensers', assignedRoleIDs: ids });
    expect((await assign([role.body.id])).status).toBe(200);
    const proxyOf = async (who: string) => {
      const made = await api(who, 'POST', '/user/license-proxy?org=acme', {});
      expect(made.status).toBe(200);
      return (/token: ([0-9a-f]{40})/.exec(made.body.yaml) ?? [])[1];
    };
    t.tokens.miaProxy = await proxyOf('mia');
    const issued = await api('miaProxy', 'POST', '/license/issue', { cluster: HUB });
    expect(issued.status).toBe(200);
    expect(
      new X509Certificate(Buffer.from(issued.body.license, 'base64')).checkIssued(new X509Certificate((await bytes('/licenses/ca')).body)),
    ).toBe(true);
    expect((await assign([])).status).toBe(200);
    expect(await api('miaProxy', 'POST', '/license/issue', { cluster: HUB })).toMatchObject({
      status: 403,
      body: { message: 'the license proxy’s token belongs to someone who may no longer issue licenses for the organization' },
    });
    // The owner's proxy issues until its token is deleted.
    t.tokens.oliviaProxy = await proxyOf('olivia');
    expect((await api('oliviaProxy', 'POST', '/license/issue', { cluster: HUB })).status).toBe(200);
    const auth = { authorization: basic('olivia', 'olivia-password') };
    const listed = (await api(undefined, 'GET', '/users/olivia/tokens', undefined, auth)).body as { id: number; scope?: string }[];
    const proxies = listed.filter((x) => x.scope === 'license-proxy');
    expect(proxies).toHaveLength(1);
    expect((await api(undefined, 'DELETE', `/users/olivia/tokens/${proxies[0].id}`, undefined, auth)).status).toBe(204);
    expect((await api('oliviaProxy', 'POST', '/license/issue', { cluster: HUB })).status).toBe(401);
  });

  it('registers a cluster with a valid license, recorded once and listed to site admins; 400 for empty features, 422 for a tampered license or bytes after it', async () => {
    const register = (body: Record<string, unknown>) =>
      api(undefined, 'POST', '/register', { clusterUID: HUB, features: 'postgres', license, ...body });
    expect((await register({})).status).toBe(200);
    expect((await register({})).status).toBe(200);
    expect((await register({ features: '' })).status).toBe(400);
    const der = Buffer.from(license, 'base64');
    const tampered = Buffer.from(der);
    tampered[tampered.length - 12] ^= 1;
    const pem = `-----BEGIN CERTIFICATE-----\n${license}\n-----END CERTIFICATE-----\n`;
    // One certificate is a license; anything after it makes it none.
    for (const bad of [tampered, Buffer.concat([der, Buffer.alloc(3)]), Buffer.concat([der, der]), Buffer.from(pem + pem)])
      expect((await register({ license: bad.toString('base64') })).status).toBe(422);
    expect((await register({ license: Buffer.from(pem).toString('base64') })).status).toBe(200);
    // Another cluster's license is a bad license, not an unknown cluster.
    expect((await register({ clusterUID: OFFLINE })).status).toBe(422);
    expect((await register({ license: undefined })).status).toBe(422);

    const listed = await api('root', 'GET', '/licenses/registrations');
    expect(listed.status).toBe(200);
    const mine = (listed.body as any[]).filter((r) => r.licenseID === serial);
    expect(mine).toEqual([
      expect.objectContaining({
        clusterID: HUB,
        contractID: contractId,
        ownerName: 'acme',
        email: new X509Certificate(der).subjectAltName!.split('email:')[1],
      }),
    ]);
    expect((await api('olivia', 'GET', '/licenses/registrations')).status).toBe(403);
    expect((await api(undefined, 'GET', '/licenses/registrations')).status).toBe(401);
  });

  it('registers an air-gapped cluster that one of the owner’s contracts binds, never enrolled; once unbound it is unknown (400)', async () => {
    const AIRGAPPED = '88888888-aaaa-4aaa-8aaa-888888888888';
    const own = (await api('root', 'GET', '/contracts')).body.find((c: any) => c.autoAssignCluster && c.allowOffline);
    const issued = await api('root', 'POST', '/license/issue', { cluster: AIRGAPPED, features: ['postgres'] });
    expect(issued.status).toBe(200);
    const register = () =>
      api(undefined, 'POST', '/register', { clusterUID: AIRGAPPED, features: 'postgres', license: issued.body.license });
    expect((await register()).status).toBe(200);
    expect(((await api('root', 'GET', '/licenses/registrations')).body as any[]).map((r) => r.clusterID)).toContain(AIRGAPPED);
    const cc = ((await api('root', 'GET', `/contracts/${own.id}/clusters`)).body as any[]).find((c) => c.cluster === AIRGAPPED);
    expect((await api('root', 'DELETE', `/contracts/${own.id}/clusters/${cc.id}`)).status).toBe(200);
    const refused = await register();
    expect([refused.status, refused.body.message]).toEqual([400, `cluster ${AIRGAPPED} is not registered with the platform`]);
  });

  it('refuses a license whose SubjectAltName, AuthorityKeyIdentifier, KeyUsage or ExtendedKeyUsage does not decode: 422 malformed, not 500', async () => {
    const der = Buffer.from(license, 'base64');
    for (const last of [0x11, 0x23, 0x0f, 0x25]) {
      const registered = await api(undefined, 'POST', '/register', {
        clusterUID: HUB,
        features: 'postgres',
        license: corruptExtension(der, last).toString('base64'),
      });
      expect([last, registered.status, registered.body.message]).toEqual([last, 422, expect.stringMatching(/not an X.509 certificate/)]);
    }
  });

  it('keeps a cluster to the tenant that enrolled it: refused to another’s contracts by every door without its name, and a UUID licensed before its owner enrolled it licensed no more', async () => {
    const ENROLLED = '3c1f9a2e-7b4d-4e6f-8a1b-2c3d4e5f6a70';
    const TAKEN_LATER = '3c1f9a2e-7b4d-4e6f-8a1b-2c3d4e5f6a71';
    for (const who of ['alice', 'bob']) await t.signUp(who);
    expect((await api('alice', 'POST', '/orgs', { username: 'alpha' })).status).toBe(201);
    expect((await api('bob', 'POST', '/orgs', { username: 'bravo' })).status).toBe(201);
    expect((await api('alice', 'POST', '/orgs/alpha/clusters', { name: 'secret-prod', uid: ENROLLED })).status).toBe(201);
    const bravos = await createContract('bravo', { features: JSON.stringify(['postgres']), allowOffline: 'true' });
    /** Nothing of alpha's in an answer: not its name, not its cluster's. */
    const alphaFree = (res: { body: unknown }) => expect(JSON.stringify(res.body)).not.toMatch(/alpha|secret-prod/);

    // alpha's enrolled cluster: the clusters app's inventory, as contracts-licensing keeps it, refuses it to bravo.
    for (const refused of [
      await api('bob', 'POST', '/user/contracts/assign-cluster?org=bravo', { clusterId: ENROLLED, contractIds: [bravos] }),
      await api('bob', 'POST', `/user/contracts/${bravos}/clusters?org=bravo`, [{ cluster: ENROLLED }]),
      await api('root', 'POST', `/contracts/${bravos}/clusters?org=bravo`, [{ cluster: ENROLLED }]),
    ]) {
      expect(refused.status).toBe(403);
      alphaFree(refused);
    }
    const own = await createContract('bob', { allowOffline: 'true', autoAssignCluster: 'true' });
    expect(await api('bob', 'POST', '/license/issue', { cluster: ENROLLED })).toMatchObject({
      status: 404,
      body: { message: `no active contract of the account covers cluster ${ENROLLED}` },
    });
    expect((await api('bob', 'GET', `/user/contracts/${own}/clusters`)).body).toEqual([]);
    const status = await api('bob', 'GET', `/user/contracts/active/associated-clusters/${ENROLLED}/status?org=bravo`);
    expect(status.body.clusterStatus).toMatchObject({ isImported: false, name: '' });
    const theirs = await api('alice', 'GET', `/user/contracts/active/associated-clusters/${ENROLLED}/status?org=alpha`);
    expect(theirs.body.clusterStatus).toMatchObject({ isImported: true, name: 'secret-prod' });
    const audit = await api('bob', 'GET', `/user/contracts/${bravos}/audit?org=bravo`);
    alphaFree(audit);
    expect(JSON.stringify(audit.body)).not.toContain(ENROLLED);

    // A UUID nobody had enrolled: bravo binds and licenses it, until alpha enrolls its cluster under it.
    const bound = await api('bob', 'POST', `/user/contracts/${bravos}/clusters?org=bravo`, [{ cluster: TAKEN_LATER }]);
    expect(bound.status).toBe(201);
    const issue = `/user/contracts/${bravos}/clusters/${bound.body[0].id}/issue-license?org=bravo`;
    const early = await api('bob', 'POST', issue);
    expect(early.status).toBe(200);
    expect((await api('alice', 'POST', '/orgs/alpha/clusters', { name: 'late', uid: TAKEN_LATER })).status).toBe(201);
    for (const refused of [
      await api('bob', 'POST', issue),
      await api('bob', 'POST', '/user/license-proxy?org=bravo', { clusterID: TAKEN_LATER, contractIDs: [bravos] }),
    ]) {
      expect(refused.status).toBe(403);
      alphaFree(refused);
    }
    const register = (license: string) => api(undefined, 'POST', '/register', { clusterUID: TAKEN_LATER, features: 'postgres', license });
    const registered = await register(early.body.license);
    expect([registered.status, registered.body.message]).toEqual([400, `cluster ${TAKEN_LATER} is not registered with the platform`]);
    const listed = ((await api('bob', 'GET', `/user/contracts/${bravos}/clusters?org=bravo`)).body as any[]).find(
      (c) => c.cluster === TAKEN_LATER,
    );
    expect(listed.clusterStatus).toMatchObject({ isImported: false, name: '' });
    // alpha's own license for its cluster registers.
    const alphas = await createContract('alpha', { features: JSON.stringify(['postgres']) });
    const mine = await api('root', 'POST', `/contracts/${alphas}/clusters?org=alpha`, [{ cluster: TAKEN_LATER }]);
    expect(mine.status).toBe(201);
    const license = await api('alice', 'POST', `/user/contracts/${alphas}/clusters/${mine.body[0].id}/issue-license?org=alpha`);
    expect(license.status).toBe(200);
    expect((await register(license.body.license)).status).toBe(200);
  });

  it('shows on the billing dashboard an organization’s new email and a contract’s revocation on the very next request, though the gateway keeps accounts, issued licenses and contract counts', async () => {
    const acme = (await api('root', 'GET', '/orgs/acme')).body as { id: number; email: string };
    // A second contract of acme binding the hub, and its license for the hub, reported as used by the hub.
    const second = await createContract('acme', { features: JSON.stringify(['postgres']) });
    const [cc] = (await api('root', 'POST', `/contracts/${second}/clusters?org=acme`, [{ cluster: HUB }])).body as { id: number }[];
    const issued = await api('root', 'POST', `/contracts/${second}/clusters/${cc.id}/issue-license`);
    expect(issued.status).toBe(200);
    const lid = BigInt(`0x${new X509Certificate(Buffer.from(issued.body.license, 'base64')).serialNumber}`).toString();
    const reported = new Date(Date.now() - 3_600_000);
    const billing = t.platform.apps.get('billing-dashboard')!.ctx;
    await billing.db!.table('licensed_products').insert({
      user_id: acme.id,
      cluster_uid: HUB,
      license_id: lid,
      product: 'productdb',
      first_received_at: reported,
      last_received_at: reported,
    });
    // Written behind billing-dashboard's back, so announced as its ingestion announces the reports it applies.
    await billing.bus!.notify(BILLING_CHANGED, {});
    const dashboard = async (p: string) => {
      const res = await api('root', 'GET', `${p}${p.includes('?') ? '&' : '?'}org=acme`);
      expect({ p, status: res.status }).toEqual({ p, status: 200 });
      return res.body;
    };
    const emailOf = async () => (await dashboard('/dashboard/users/')).find((u: { userID: number }) => u.userID === acme.id)?.email;
    await eventually(async () => (await emailOf()) !== undefined, 10_000);
    // Read twice: the second answers come from what the gateway kept.
    expect(await emailOf()).toBe(acme.email);
    expect(await emailOf()).toBe(acme.email);
    expect((await api('olivia', 'PATCH', '/orgs/acme', { email: 'licensing@acme.example.com' })).status).toBe(200);
    expect(await emailOf()).toBe('licensing@acme.example.com');

    const hubCount = async () =>
      (await dashboard(`/dashboard/users/${acme.id}/clusters/active`)).find((c: { clusterID: string }) => c.clusterID === HUB)
        .noOfAssociatedContracts;
    const license = async () => (await dashboard(`/dashboard/users/${acme.id}/clusters/${HUB}/licenses/${lid}`)).license;
    const before = await hubCount();
    expect(before).toBeGreaterThanOrEqual(2);
    expect(await hubCount()).toBe(before);
    const issuedAt = (await license()).updatedAt;
    expect(await license()).toMatchObject({
      licenseID: lid,
      clusters: [HUB],
      updatedAt: issuedAt,
      planName: expect.stringMatching(/-enterprise$/),
    });

    expect((await api('root', 'POST', `/contracts/${second}/revoke`)).status).toBe(200);
    expect(await hubCount()).toBe(before - 1);
    // A revoked license's updatedAt is its revocation.
    const revokedAt = (await t.platform.apps.get('contracts-licensing')!.ctx.db!.table('issued_licenses').where({ serial: lid }).first())
      .revoked_at;
    expect((await license()).updatedAt).toBe(Math.floor(new Date(revokedAt).getTime() / 1000));
  });

  it("counts a cluster an organization records in its namespace billing on the very next request, though the gateway keeps the organization's clusters", async () => {
    expect((await api('solo', 'POST', '/orgs', { username: 'solo-org' })).status).toBe(201);
    const uid = '5d1c0a9e-4b7f-4c2a-9e3d-0a1b2c3d4e5f';
    const fresh = `/dbaas/billing/reports/clusters/${uid}/namespaces/default?org=solo-org`;
    // Asked twice: the second answer comes from the clusters the gateway kept.
    expect((await api('solo', 'GET', '/dbaas/billing/reports/namespaces?org=solo-org')).body.rows).toEqual([]);
    expect((await api('solo', 'GET', fresh)).status).toBe(404);
    expect((await api('solo', 'GET', fresh)).status).toBe(404);
    expect((await api('solo', 'POST', '/orgs/solo-org/clusters', { name: 'fresh-hub', uid })).status).toBe(201);
    expect((await api('solo', 'GET', fresh)).body).toMatchObject({ clusterUID: uid, namespace: 'default', rows: [] });
  });

  it('revoking the contract publishes the license on the CRL; /register and the command-line verifier refuse it', async () => {
    expect((await api('root', 'POST', `/contracts/${contractId}/revoke`)).status).toBe(200);
    const crl = await bytes('/licenses/crl');
    expect(crl.status).toBe(200);
    expect(crl.type).toBe('application/pkix-crl');
    const pem = await bytes('/licenses/crl?format=pem');
    expect(pem.body.toString()).toMatch(/^-----BEGIN X509 CRL-----/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'licenses-e2e-'));
    try {
      fs.writeFileSync(path.join(dir, 'crl.der'), crl.body);
      fs.writeFileSync(path.join(dir, 'ca.pem'), (await bytes('/licenses/ca')).body);
      fs.writeFileSync(path.join(dir, 'license.b64'), license);
      // OpenSSL, a third implementation, lists the serial.
      const openssl = spawnSync('openssl', ['crl', '-inform', 'DER', '-in', path.join(dir, 'crl.der'), '-noout', '-text'], {
        encoding: 'utf8',
      });
      // OpenSSL prints the serial's bytes as DER holds them: no leading zero byte (one serial in 128 has one).
      const hex = BigInt(serial).toString(16).toUpperCase();
      if (openssl.status === 0) expect(openssl.stdout.replace(/\s/g, '')).toContain(hex.length % 2 ? `0${hex}` : hex);
      const cli = spawnSync(
        process.execPath,
        [
          'deploy/cli/license.mjs',
          'verify',
          path.join(dir, 'license.b64'),
          '--cluster',
          HUB,
          '--ca',
          path.join(dir, 'ca.pem'),
          '--crl',
          path.join(dir, 'crl.der'),
        ],
        { cwd: ROOT, encoding: 'utf8' },
      );
      expect(cli.status).not.toBe(0);
      expect(`${cli.stdout}${cli.stderr}`).toMatch(/revoked/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const registered = await api(undefined, 'POST', '/register', { clusterUID: HUB, features: 'postgres', license });
    expect(registered.status).toBe(422);
    expect(registered.body.message).toMatch(/revoked/);
    expect((await api('root', 'POST', `/contracts/${contractId}/clusters/${ccId}/issue-license`)).status).toBe(405);
  });
});

describe('license registration on a self-hosted platform', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await bootTestPlatform({ DEPLOYMENT_TYPE: 'SelfHostedProduction' });
  }, 120_000);
  afterAll(() => t?.stop());

  it('makes the license holder an account without a usable password, once however often the cluster registers', async () => {
    await t.signUp('olivia');
    // Contracts have no routes here: made as the platform's own apps would, for olivia's account.
    const address = t.grpcAddress('contracts-licensing');
    const contracts = createClient(contractsV1.ContractsServiceService, address, { name: 'contracts-licensing' });
    const licensing = createClient(licensingV1.LicensingServiceService, address, { name: 'contracts-licensing' });
    const [contract] = (
      await contracts.createContracts({
        ownerId: t.ids.olivia,
        ownerLogin: 'olivia',
        ownerType: 'user',
        products: ['productdb'],
        fields: { features: ['postgres'], featuresGiven: true, endUnix: NOW + YEAR, allowOffline: true },
        actor: 'root',
      })
    ).contracts;
    const [cc] = (
      await contracts.bindClusters({
        id: contract.id,
        ownerId: 0,
        clusters: [{ cluster: OFFLINE, displayName: '', tags: [] }],
        actor: 'root',
      })
    ).clusters;
    const license = await licensing.issueContractLicense({
      contractId: contract.id,
      ccId: cc.id,
      ownerId: 0,
      actor: 'root',
      ownerEmail: 'dana.ops@customer.example',
    });
    contracts.close();
    licensing.close();

    const register = () =>
      t.api(undefined, 'POST', '/register', {
        clusterUID: OFFLINE,
        features: 'postgres',
        license: Buffer.from(license.license).toString('base64'),
      });
    expect((await register()).status).toBe(200);
    expect((await register()).status).toBe(200);
    const holder = await t.api('root', 'GET', '/users/dana.ops');
    expect(holder).toMatchObject({ status: 200, body: { login: 'dana.ops', email: 'dana.ops@customer.example' } });
    const registrations = (await t.api('root', 'GET', '/licenses/registrations')).body as any[];
    expect(registrations).toEqual([
      expect.objectContaining({
        licenseID: license.serial,
        clusterID: OFFLINE,
        userID: holder.body.id,
        username: 'dana.ops',
        ownerName: 'olivia',
      }),
    ]);
    // No password until its holder sets one through a reset.
    for (const password of ['', 'password', 'dana.ops-password'])
      expect((await t.api(undefined, 'GET', '/user', undefined, { authorization: basic('dana.ops', password) })).status).toBe(401);
  });
});
