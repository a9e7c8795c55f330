import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InputError, NotFoundError } from '@platform/errors';
import { FileObjectStorage } from '@platform/object-storage';
import { contractsV1, orgsTeamsOrgsV1, orgsTeamsV1, QUOTA_METRICS } from '@platform/proto';
import { type FakeBackends, fakeOrgAndCaller, startFakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The admin and user contract rows at the edge (docs/contracts.md), against a stand-in contracts-licensing: the
// multipart form read into what contracts-licensing is asked (lists as repeated fields or JSON, nested emails, the
// document), 422 and 415 for a form it cannot read and 413 over CONTRACT_DOCUMENT_MAX_BYTES before anything is
// asked, the owner account (`org`, else the caller), site admins only on the admin rows (401, 403, nothing asked),
// the whole Contract sent back with its read-only fields, the document URL signed for 30 minutes and served without
// a token, contracts-licensing's 400 and 404 passed on; on the user rows the sanitized contract, 403 and 400 for
// another account's contract where the spec says so, preferences asked of authz on the contract with its owner.
// What contracts-licensing does with each request: apps/contracts-licensing/test/contracts.int.test.ts and
// contract-lists.int.test.ts; who may call each row with real authz: deploy/local/test/authz-matrix.e2e.test.ts.

const user = (id: number, login: string, isAdmin = false) => orgsTeamsV1.User.fromPartial({ id, login, active: true, isAdmin });
/** root is a site admin; olivia owns acme, mia is a member of it; otto owns globex. */
const USERS = {
  root: user(1, 'root', true),
  olivia: user(2, 'olivia'),
  mia: user(3, 'mia'),
  otto: user(4, 'otto'),
  quinn: user(5, 'quinn'),
};
const ACME = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'acme' });
const GLOBEX = orgsTeamsOrgsV1.Organization.fromPartial({ id: 11, username: 'globex' });
const MEMBERS: Record<number, number[]> = { [ACME.id]: [USERS.olivia.id, USERS.mia.id], [GLOBEX.id]: [USERS.otto.id] };
const OWNERS: Record<number, number[]> = { [ACME.id]: [USERS.olivia.id], [GLOBEX.id]: [USERS.otto.id] };

const HUB = '11111111-aaaa-4aaa-8aaa-111111111111';
const MAX_DOCUMENT = 8 * 1024;
const DOCUMENT_KEY = 'contracts/documents/acme-contract.txt';
const DOCUMENT = 'signed contract: every page initialled\n';
/** acme's contract, the only one contracts-licensing knows; every recipient list filled. */
const ID = 7;
const EMAILS = {
  contactPerson: ['carol@acme.example'],
  signingAuthority: ['sam@acme.example'],
  licenseUsers: ['lu@acme.example'],
  financeTeam: ['fin@acme.example'],
  usageAlertClient: ['alerts@acme.example'],
  usageAlertAdmin: ['ops@platform.example'],
};
const BOUND = contractsV1.ContractClusterStatus.fromPartial({
  id: 70,
  contractId: ID,
  cluster: HUB,
  displayName: 'Hub A',
  clusterStatus: { isImported: true, name: 'hub-a', tags: ['prod'], associatedContractId: ID },
});
const CONTRACT = contractsV1.Contract.fromPartial({
  id: ID,
  ownerId: ACME.id,
  ownerLogin: 'acme',
  name: 'Acme DB',
  product: 'productdb',
  features: ['postgres'],
  emails: EMAILS,
  quota: { enabled: true, metric: 'cpu-core-hours', limit: 1000, alertThresholds: [50, 90] },
  startUnix: 1_700_000_000,
  endUnix: 1_900_000_000,
  documentPath: DOCUMENT_KEY,
  allowOffline: true,
  restrictions: '{"maxNodes":10}',
  clusters: [BOUND],
});

/** As contracts-licensing answers a contract by id: NotFound unless it is acme's (an owner of 0 is any owner). */
function acmes({ id, ownerId }: { id: number; ownerId: number }) {
  if (id !== ID || (ownerId !== 0 && ownerId !== ACME.id)) throw new NotFoundError(`contract ${id} does not exist`);
}

function form(fields: Record<string, string | string[]>, document?: { body: string | Uint8Array; name: string }): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) f.append(k, one);
  if (document) f.append('document', new Blob([document.body], { type: 'text/plain' }), document.name);
  return f;
}

describe('contracts at the edge', () => {
  let backends: FakeBackends;
  let base: string;
  let close: () => void;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-contracts-'));
    await new FileObjectStorage(path.join(dataDir, 'objects')).put(DOCUMENT_KEY, Buffer.from(DOCUMENT), 'text/plain');
    // Site permissions are root's; members hold access:org, owners everything on their organization.
    const callers = fakeOrgAndCaller(
      USERS,
      [ACME, GLOBEX],
      (userId, permission, objectId) =>
        userId === USERS.root.id ||
        (!permission.endsWith(':site_admin') &&
          (OWNERS[objectId]?.includes(userId) || (permission === 'access:org' && !!MEMBERS[objectId]?.includes(userId)))),
    );
    backends = await startFakeBackends({
      ...callers,
      authz: {
        authz: {
          ...callers.authz.authz,
          // updated_preferences on a contract: the owners of the owner organization handed as a contextual tuple.
          check: async ({ tuple, contextualTuples }) => {
            const owner = contextualTuples.find((t) => t.relation === 'owner' && t.object === tuple?.object)?.user;
            const orgId = Number(owner?.replace('organization:', ''));
            return { allowed: !!OWNERS[orgId]?.includes(Number(tuple?.user.replace('user:', ''))), dependsOn: [] };
          },
        },
      },
      contractsLicensing: {
        contracts: {
          createContracts: async (req) => {
            if (req.products.length === 0) throw new InputError('products: at least one product is required');
            return {
              contracts: req.products.map((product, i) =>
                contractsV1.Contract.fromPartial({
                  id: 20 + i,
                  ownerId: req.ownerId,
                  ownerLogin: req.ownerLogin,
                  product,
                  name: req.fields?.name,
                  quota: req.fields?.quota,
                }),
              ),
            };
          },
          listContracts: async () => ({ contracts: [CONTRACT] }),
          getContract: async (req) => (acmes(req), CONTRACT),
          updateContract: async (req) => (acmes(req), { ...CONTRACT, name: req.fields?.name ?? CONTRACT.name }),
          extendContract: async (req) => (acmes(req), { ...CONTRACT, endUnix: req.endUnix }),
          getDocument: async (req) => (acmes(req), { path: DOCUMENT_KEY, fileName: 'contract.txt', contentType: 'text/plain' }),
          listAudit: async (req) => (
            acmes(req),
            { events: [{ id: 1, contractId: ID, addedBy: 'root', event: 'contract-created: productdb', createdUnix: 1 }] }
          ),
          listContractClusters: async (req) => (acmes(req), { clusters: [BOUND] }),
          bindClusters: async (req) => {
            acmes(req);
            if (req.clusters.some((c) => c.cluster === HUB)) throw new InputError(`cluster ${HUB} is already associated`);
            return { clusters: req.clusters.map((c) => ({ ...BOUND, ...c, clusterStatus: { ...BOUND.clusterStatus!, tags: c.tags } })) };
          },
          importableClusters: async (req) => {
            if (req.id !== ID) throw new InputError(`invalid contract ${req.id}`);
            return {
              clusters: [
                contractsV1.ImportableCluster.fromPartial({
                  uid: HUB,
                  name: 'hub-b',
                  displayName: 'HUB-B',
                  statusJson: '{"phase":"Ready"}',
                  nodeCount: 3,
                }),
              ],
            };
          },
          unbindCluster: async (req) => (acmes(req), {}),
          renameContractCluster: async ({ ref }) => (acmes(ref!), {}),
          setContractClusterTags: async ({ ref }) => (acmes(ref!), {}),
          clusterStatus: async (req) => ({ ...BOUND, cluster: req.cluster }),
          batchClusterStatus: async (req) => ({ clusters: req.clusters.map((cluster) => ({ ...BOUND, cluster })) }),
          associatedClusters: async () => ({ clusters: [{ cluster: HUB, displayName: 'Hub A', tags: [], associatedContractIds: [ID] }] }),
          setPreferences: async (req) => (acmes(req), { ...CONTRACT, emails: { ...EMAILS, usageAlertClient: req.usageAlertClient } }),
          availableProducts: async () => ({ catalogJson: '{"productdb":{"plan":"db"},"productvault":{"plan":"vault"}}' }),
        },
      },
    });
    ({ base, close } = await startTestGateway({
      ...backends.env,
      DEPLOYMENT_TYPE: 'Hosted',
      PLATFORM_ADMIN_ORG: 'none',
      DATA_DIR: dataDir,
      OBJECT_STORAGE_SIGNING_KEY: 's'.repeat(40),
      CONTRACT_DOCUMENT_MAX_BYTES: String(MAX_DOCUMENT),
    }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => backends.contractsLicensing.reset());

  /** A request as `who` (a login is its token) with a JSON body, or a form sent as multipart. */
  const api = async (who: string | undefined, method: string, p: string, body?: unknown) => {
    const json = body !== undefined && !(body instanceof FormData);
    const res = await fetch(`${base}/api/v1${p}`, {
      method,
      headers: { ...(who && { authorization: `token ${who}` }), ...(json && { 'content-type': 'application/json' }) },
      body: json ? JSON.stringify(body) : (body as FormData | undefined),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const status = async (...args: Parameters<typeof api>) => (await api(...args)).status;
  const asked = (method: keyof contractsV1.ContractsServiceService & string) => backends.contractsLicensing.callsTo('contracts', method);

  describe('admin rows', () => {
    it('creates one contract per product from a multipart form, every field and the document handed on: 201 with Contract[]', async () => {
      const fields = {
        name: 'Acme enterprise',
        products: JSON.stringify(['productdb', 'productbackup']),
        emails: JSON.stringify(EMAILS),
        quota: JSON.stringify({ enabled: true, metric: 'cpu-core-hours', limit: 1000, alertThresholds: [50, 90] }),
        start: '1700000000',
        end: '1900000000',
        allowOffline: 'true',
        restrictions: '{"maxNodes":10}',
      };
      const res = await api('root', 'POST', '/contracts?org=acme', form(fields, { body: DOCUMENT, name: 'acme contract.txt' }));
      expect(res.status).toBe(201);
      expect(res.body.map((c: any) => [c.product, c.uid, c.orgOrUser])).toEqual([
        ['productdb', ACME.id, 'acme'],
        ['productbackup', ACME.id, 'acme'],
      ]);
      const [req] = asked('createContracts');
      expect(req).toMatchObject({
        ownerId: ACME.id,
        ownerLogin: 'acme',
        ownerType: 'organization',
        products: ['productdb', 'productbackup'],
        actor: 'root',
        fields: {
          name: 'Acme enterprise',
          emails: EMAILS,
          quota: { enabled: true, metric: 'cpu-core-hours', limit: 1000, alertThresholds: [50, 90], disableLicenseOnLimitReached: false },
          startUnix: 1_700_000_000,
          endUnix: 1_900_000_000,
          allowOffline: true,
          restrictions: '{"maxNodes":10}',
          featuresGiven: false,
        },
        document: { fileName: 'acme contract.txt', contentType: 'text/plain' },
      });
      expect(Buffer.from(req.document!.content).toString()).toBe(DOCUMENT);
    });

    it('takes products as repeated fields and emails as nested fields; the owner is the caller without org, a user named by org', async () => {
      const fields = { products: ['productvault', 'productdb'], 'emails[licenseUsers]': 'root@example.com', end: '1900000000' };
      expect(await status('root', 'POST', '/contracts', form(fields))).toBe(201);
      expect(await status('root', 'POST', '/contracts?org=quinn', form(fields))).toBe(201);
      const [own, quinns] = asked('createContracts');
      expect(own).toMatchObject({ ownerId: USERS.root.id, ownerLogin: 'root', ownerType: 'user', products: ['productvault', 'productdb'] });
      expect(own.fields?.emails?.licenseUsers).toEqual(['root@example.com']);
      expect(own.document).toBeUndefined();
      expect(quinns).toMatchObject({ ownerId: USERS.quinn.id, ownerLogin: 'quinn', ownerType: 'user' });
    });

    it('hands an empty products list on however it comes, and passes contracts-licensing’s 400 on; the API document does not require products', async () => {
      for (const fields of [{}, { products: '' }, { products: '[]' }] as Record<string, string>[]) {
        const res = await api('root', 'POST', '/contracts?org=acme', form({ end: '1900000000', ...fields }));
        expect({ fields, status: res.status, message: res.body.message }).toEqual({
          fields,
          status: 400,
          message: 'products: at least one product is required',
        });
      }
      expect(asked('createContracts').map((r) => r.products)).toEqual([[], [], []]);
      const doc = (await api(undefined, 'GET', '/openapi.json')).body;
      expect(doc.components.schemas.CreateContractForm.required ?? []).not.toContain('products');
    });

    it('hands the quota metric on as sent and answers it so; the API document lists every metric on both forms', async () => {
      const quota = { enabled: true, metric: 'memory_gib_month', limit: 100, alertThresholds: [], disableLicenseOnLimitReached: false };
      const res = await api('root', 'POST', '/contracts?org=acme', form({ products: 'productdb', quota: JSON.stringify(quota) }));
      expect(res.body[0].quota).toEqual(quota);
      expect(await status('root', 'PUT', `/contracts/${ID}`, form({ quota: '{"metric":"cpu_core_month","limit":3}' }))).toBe(200);
      expect(asked('updateContract')[0].fields?.quota).toMatchObject({ metric: 'cpu_core_month', limit: 3 });
      const doc = (await api(undefined, 'GET', '/openapi.json')).body;
      for (const name of ['CreateContractForm', 'UpdateContractForm']) {
        const field = doc.components.schemas[name].properties.quota;
        expect(field).toMatchObject({ type: 'string', contentMediaType: 'application/json' });
        // Every metric contracts-licensing takes (which its integration tests name).
        expect(field.contentSchema.properties.metric.enum).toEqual(expect.arrayContaining([...QUOTA_METRICS]));
      }
    });

    it('refuses a form it cannot read with 422, JSON with 415 and a document over CONTRACT_DOCUMENT_MAX_BYTES with 413, nothing asked', async () => {
      const post = (body: unknown) => status('root', 'POST', '/contracts?org=acme', body);
      const end = '1900000000';
      expect(await post(undefined)).toBe(422);
      for (const fields of [
        { products: 'productdb', end, emails: '{broken' },
        { products: 'productdb', end, allowOffline: 'maybe' },
        { products: 'productdb', end: 'tomorrow' },
        { products: 'productdb', end, owner: 'x' },
        { products: 'productdb', end, emails: '{"cc":["a@b.c"]}' },
      ] as Record<string, string>[])
        expect([fields, await post(form(fields))]).toEqual([fields, 422]);
      expect(await post({ products: ['productdb'], end: 1_900_000_000 })).toBe(415);
      expect(await post(form({ products: 'productdb', end }, { body: new Uint8Array(MAX_DOCUMENT + 1).fill(65), name: 'big.pdf' }))).toBe(
        413,
      );
      expect(await status('root', 'PUT', `/contracts/${ID}`, form({ quota: 'not json' }))).toBe(422);
      expect(backends.contractsLicensing.calls).toEqual([]);
    });

    it('is for site admins only: 401 without a token, 403 to the organization’s owner too, nothing asked', async () => {
      const rows: [string, string, unknown?][] = [
        ['GET', '/contracts?org=acme'],
        ['POST', '/contracts?org=acme', form({ products: 'productdb' })],
        ['GET', '/contracts/available_products'],
        ['GET', `/contracts/${ID}?org=acme`],
        ['PUT', `/contracts/${ID}`, form({ name: 'x' })],
        ['POST', `/contracts/${ID}/extend`, { end: 1 }],
        ['GET', `/contracts/${ID}/document`],
        ['GET', `/contracts/${ID}/audit?org=acme`],
        ['POST', `/contracts/${ID}/clusters`, [{ cluster: HUB }]],
        ['PATCH', `/contracts/${ID}/clusters/70/name`, { clusterName: 'x' }],
        ['PATCH', `/contracts/${ID}/clusters/70/tags`, { tags: [] }],
        ['DELETE', `/contracts/${ID}/clusters/70`],
        ['GET', `/contracts/active/associated-clusters/${HUB}/status`],
      ];
      for (const [method, p, body] of rows) expect([method, p, await status('olivia', method, p, body)]).toEqual([method, p, 403]);
      expect(await status(undefined, 'GET', '/contracts')).toBe(401);
      expect(backends.contractsLicensing.calls).toEqual([]);
    });

    it('lists the org account’s contracts (default the caller’s own), gets one limited to `org` when given; 404 passed on, 400 for a bad id', async () => {
      expect((await api('root', 'GET', '/contracts?org=acme')).body.map((c: any) => c.id)).toEqual([ID]);
      await api('root', 'GET', '/contracts');
      expect(asked('listContracts').map((r) => r.ownerId)).toEqual([ACME.id, USERS.root.id]);
      expect(await api('root', 'GET', `/contracts/${ID}`)).toMatchObject({
        status: 200,
        body: { id: ID, emails: EMAILS, clusters: [{ id: 70 }] },
      });
      expect(await status('root', 'GET', '/contracts/999999')).toBe(404);
      expect(await status('root', 'GET', `/contracts/${ID}?org=globex`)).toBe(404);
      expect(asked('getContract').map((r) => r.ownerId)).toEqual([0, 0, GLOBEX.id]);
      expect(await status('root', 'GET', '/contracts/abc')).toBe(400);
    });

    it('answers the product catalog', async () => {
      expect((await api('root', 'GET', '/contracts/available_products')).body).toEqual({
        productdb: { plan: 'db' },
        productvault: { plan: 'vault' },
      });
    });

    it('updates the given fields and the document; extends from a Contract body of which only `end` counts; 404 and 422', async () => {
      const res = await api(
        'root',
        'PUT',
        `/contracts/${ID}`,
        form({ name: 'Acme DB 2', autoAssignCluster: 'true' }, { body: 'v2\n', name: 'v2.txt' }),
      );
      expect(res).toMatchObject({ status: 200, body: { name: 'Acme DB 2' } });
      const [update] = asked('updateContract');
      expect(update).toMatchObject({
        id: ID,
        ownerId: 0,
        actor: 'root',
        fields: { name: 'Acme DB 2', autoAssignCluster: true, featuresGiven: false },
      });
      expect(update.fields?.emails).toBeUndefined();
      expect(update.fields?.endUnix).toBeUndefined();
      expect(update.document).toMatchObject({ fileName: 'v2.txt' });
      expect(await status('root', 'PUT', '/contracts/999999', form({ name: 'x' }))).toBe(404);

      const extended = await api('root', 'POST', `/contracts/${ID}/extend`, { ...res.body, end: 1_950_000_000, name: 'ignored' });
      expect(extended).toMatchObject({ status: 200, body: { end: 1_950_000_000, name: 'Acme DB' } });
      expect(asked('extendContract')).toEqual([{ id: ID, ownerId: 0, endUnix: 1_950_000_000, actor: 'root' }]);
      expect(await status('root', 'POST', '/contracts/999999/extend', { end: 1 })).toBe(404);
      expect(await status('root', 'POST', `/contracts/${ID}/extend`, { end: 'later' })).toBe(422);
    });

    it('takes the whole Contract back as GET answers it, one field edited; a read-only field changed is 400 naming it, nothing updated', async () => {
      const read = (await api('root', 'GET', `/contracts/${ID}`)).body;
      const asForm = (c: Record<string, unknown>) =>
        form(Object.fromEntries(Object.entries(c).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])));
      expect(await api('root', 'PUT', `/contracts/${ID}`, asForm({ ...read, name: 'edited' }))).toMatchObject({
        status: 200,
        body: { name: 'edited' },
      });
      expect(asked('updateContract')).toHaveLength(1);
      for (const [field, value] of [
        ['product', 'productvault'],
        ['id', ID + 1],
        ['uid', ACME.id + 1],
        ['orgOrUser', 'globex'],
        ['revoked', true],
        ['documentPath', 'contracts/documents/elsewhere.pdf'],
        ['clusters', []],
        ['clusters', read.clusters.map((c: any) => ({ ...c, displayName: 'renamed by PUT' }))],
      ] as const) {
        const refused = await api('root', 'PUT', `/contracts/${ID}`, asForm({ ...read, name: 'not this', [field]: value }));
        expect([field, refused.status, refused.body.errors]).toEqual([field, 400, [expect.objectContaining({ field })]]);
      }
      expect(asked('updateContract')).toHaveLength(1);
    });

    it('answers the document as a URL signed for 30 minutes, downloaded without a token as an attachment; forged, tampered and unsigned URLs 403; 404 without one', async () => {
      const res = await api('root', 'GET', `/contracts/${ID}/document`);
      expect(res.status).toBe(200);
      const { pathname, searchParams } = new URL(res.body);
      const url = new URL(pathname, base);
      searchParams.forEach((v, k) => url.searchParams.set(k, v));
      const expires = Number(url.searchParams.get('expires'));
      const now = Math.floor(Date.now() / 1000);
      expect(expires).toBeGreaterThanOrEqual(now + 30 * 60 - 5);
      expect(expires).toBeLessThanOrEqual(now + 30 * 60 + 1);
      const download = await fetch(url);
      expect([download.status, await download.text()]).toEqual([200, DOCUMENT]);
      expect(download.headers.get('content-disposition')).toMatch(/^attachment/);

      const forged = new URL(url);
      forged.searchParams.set('expires', String(expires + 3600));
      const tampered = new URL(url);
      const sig = tampered.searchParams.get('signature')!;
      tampered.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
      const unsigned = new URL(url);
      unsigned.search = '';
      for (const bad of [forged, tampered, unsigned]) expect((await fetch(bad)).status).toBe(403);
      expect(await status('root', 'GET', '/contracts/999999/document')).toBe(404);
    });

    it('binds clusters as given (no name nor tags: empty), lists the importable ones in their shape, renames, retags and unbinds as asked; 400 passed on, 422', async () => {
      const cluster = '22222222-bbbb-4bbb-8bbb-222222222222';
      const bound = await api('root', 'POST', `/contracts/${ID}/clusters`, [{ cluster, tags: ['eu'] }]);
      expect(bound).toMatchObject({
        status: 201,
        body: [{ id: 70, cluster, clusterStatus: { isImported: true, tags: ['eu'] }, duplicateContractFeatures: [] }],
      });
      expect(asked('bindClusters')[0]).toEqual({
        id: ID,
        ownerId: 0,
        clusters: [{ cluster, displayName: '', tags: ['eu'] }],
        actor: 'root',
      });
      expect(await status('root', 'POST', `/contracts/${ID}/clusters`, [{ cluster: HUB }])).toBe(400);
      expect(await status('root', 'POST', `/contracts/${ID}/clusters`, { cluster })).toBe(422);

      expect((await api('root', 'GET', `/contracts/${ID}/clusters`)).body.map((c: any) => c.cluster)).toEqual([HUB]);
      expect((await api('root', 'GET', `/contracts/${ID}/clusters/imported/non-associated`)).body).toEqual([
        {
          id: HUB,
          uid: HUB,
          name: 'hub-b',
          displayName: 'HUB-B',
          provider: '',
          kubernetesVersion: '',
          nodeCount: 3,
          status: { phase: 'Ready' },
          hubUID: '',
        },
      ]);
      expect(await status('root', 'GET', '/contracts/999999/clusters/imported/non-associated')).toBe(400);

      const ref = { id: ID, ccId: 70, ownerId: 0, actor: 'root' };
      expect(await status('root', 'PATCH', `/contracts/${ID}/clusters/70/name`, { clusterName: 'Hub A prime' })).toBe(200);
      expect(asked('renameContractCluster')).toEqual([{ ref, name: 'Hub A prime' }]);
      expect(await status('root', 'PATCH', `/contracts/${ID}/clusters/70/tags`, { tags: ['gold', 'eu'] })).toBe(200);
      expect(asked('setContractClusterTags')).toEqual([{ ref, tags: ['gold', 'eu'] }]);
      expect(await status('root', 'DELETE', `/contracts/${ID}/clusters/70`)).toBe(200);
      expect(asked('unbindCluster')).toEqual([ref]);
      expect(await status('root', 'PATCH', `/contracts/${ID}/clusters/70/name`, { name: 'x' })).toBe(422);
      expect(await status('root', 'PATCH', `/contracts/${ID}/clusters/70/tags`, { tags: 'gold' })).toBe(422);
    });

    it('answers the status of bound clusters for the account `orgOrUserId` names, else `org`; one or a batch; 400 for a cluster that is no UUID, 422', async () => {
      const one = await api(
        'root',
        'GET',
        `/contracts/active/associated-clusters/${HUB.toUpperCase()}/status?orgOrUserId=${ACME.id}&contract=${ID}`,
      );
      expect(one).toMatchObject({ status: 200, body: { cluster: HUB, contractId: ID, clusterStatus: { isImported: true } } });
      await api('root', 'GET', `/contracts/active/associated-clusters/${HUB}/status?org=globex`);
      expect(asked('clusterStatus')).toEqual([
        { ownerId: ACME.id, cluster: HUB, contractId: ID },
        { ownerId: GLOBEX.id, cluster: HUB, contractId: 0 },
      ]);
      const batch = await api('root', 'POST', '/contracts/active/associated-clusters/batch-status?org=acme', { clusters: [HUB, 'B'] });
      expect(batch.body.map((c: any) => c.cluster)).toEqual([HUB, 'b']);
      expect(asked('batchClusterStatus')).toEqual([{ ownerId: ACME.id, clusters: [HUB, 'b'], contractId: 0 }]);
      expect(await status('root', 'POST', '/contracts/active/associated-clusters/batch-status', { clusters: 'x' })).toBe(422);
      expect(await status('root', 'GET', '/contracts/active/associated-clusters/not-a-uuid/status')).toBe(400);
    });

    it('answers the audit trail in its shape; 404 passed on', async () => {
      expect((await api('root', 'GET', `/contracts/${ID}/audit?org=acme`)).body).toEqual([
        { id: 1, contractID: ID, addedBy: 'root', event: 'contract-created: productdb', createdUnix: 1 },
      ]);
      expect(await status('root', 'GET', '/contracts/999999/audit')).toBe(404);
    });
  });

  describe('user rows', () => {
    const sanitized = { licenseUsers: EMAILS.licenseUsers, usageAlertClient: EMAILS.usageAlertClient };

    it('lists and gets the account’s contracts to its members, sanitized; the caller’s own without org; 401; 403 for a non-member, nothing asked', async () => {
      const list = await api('mia', 'GET', '/user/contracts?org=acme');
      expect(list.body.map((c: any) => [c.id, c.emails])).toEqual([[ID, sanitized]]);
      expect((await api('mia', 'GET', `/user/contracts/${ID}?org=acme`)).body.emails).toEqual(sanitized);
      await api('olivia', 'GET', '/user/contracts');
      expect(asked('listContracts').map((r) => r.ownerId)).toEqual([ACME.id, USERS.olivia.id]);
      expect(asked('getContract')).toEqual([{ id: ID, ownerId: ACME.id, actor: 'mia' }]);
      backends.contractsLicensing.reset();
      expect(await status(undefined, 'GET', '/user/contracts?org=acme')).toBe(401);
      expect(await status('otto', 'GET', '/user/contracts?org=acme')).toBe(403);
      expect(await status('otto', 'GET', `/user/contracts/${ID}?org=acme`)).toBe(403);
      expect(backends.contractsLicensing.calls).toEqual([]);
    });

    it('keeps another account’s contract unreadable: 404 to read it or its document, 403 for its audit trail, clusters and bindings, 400 to bind to it', async () => {
      const cc = `/user/contracts/${ID}/clusters/70`;
      expect(await status('otto', 'GET', `/user/contracts/${ID}?org=globex`)).toBe(404);
      expect(await status('otto', 'GET', `/user/contracts/${ID}`)).toBe(404);
      expect(await status('otto', 'GET', `/user/contracts/${ID}/document?org=globex`)).toBe(404);
      expect(await status('otto', 'GET', `/user/contracts/${ID}/audit?org=globex`)).toBe(403);
      expect(await status('otto', 'GET', `/user/contracts/${ID}/clusters?org=globex`)).toBe(403);
      expect(await status('otto', 'PATCH', `${cc}/name?org=globex`, { clusterName: 'mine' })).toBe(403);
      expect(await status('otto', 'PATCH', `${cc}/tags?org=globex`, { tags: [] })).toBe(403);
      expect(await status('otto', 'DELETE', `${cc}?org=globex`)).toBe(403);
      expect(await status('otto', 'POST', `/user/contracts/${ID}/clusters?org=globex`, [{ cluster: HUB }])).toBe(400);
      expect(await status('mia', 'GET', '/user/contracts/999999/audit?org=acme')).toBe(403);
    });

    it('lists the active offline contracts, those a cluster is and is not bound to (the cluster in context), and the bound clusters; 400 for no UUID', async () => {
      await api('mia', 'GET', '/user/contracts/active-offline-contracts?org=acme');
      const bound = await api(
        'mia',
        'GET',
        `/user/contracts/active/associated-with/clusters/${HUB.toUpperCase()}?org=acme&onlyOffline=true`,
      );
      expect(bound.body[0]).toMatchObject({ id: ID, emails: sanitized, associatedCluster: { id: 70, cluster: HUB } });
      await api('mia', 'GET', `/user/contracts/active/not-associated-with/clusters/${HUB}?org=acme`);
      const request = { ownerId: ACME.id, activeOnly: true, offlineOnly: false, boundTo: '', notBoundTo: '' };
      expect(asked('listContracts')).toEqual([
        { ...request, offlineOnly: true },
        { ...request, offlineOnly: true, boundTo: HUB },
        { ...request, notBoundTo: HUB },
      ]);
      expect((await api('mia', 'GET', '/user/contracts/active/associated-clusters?org=acme')).body).toEqual([
        { cluster: HUB, displayName: 'Hub A', tags: [], associatedContractIDs: [ID] },
      ]);
      expect(await status('mia', 'GET', '/user/contracts/active/not-associated-with/clusters/nope?org=acme')).toBe(400);
    });

    it('answers the status of bound clusters to members, one or a batch; 422 for a list body', async () => {
      await api('mia', 'GET', `/user/contracts/active/associated-clusters/${HUB}/status?org=acme&contract=${ID}`);
      await api('mia', 'POST', '/user/contracts/active/associated-clusters/batch-status?org=acme', { clusters: [HUB] });
      expect(asked('clusterStatus')).toEqual([{ ownerId: ACME.id, cluster: HUB, contractId: ID }]);
      expect(asked('batchClusterStatus')).toEqual([{ ownerId: ACME.id, clusters: [HUB], contractId: 0 }]);
      expect(await status('mia', 'POST', '/user/contracts/active/associated-clusters/batch-status?org=acme', [HUB])).toBe(422);
    });

    it('assigns one cluster to several contracts and binds, renames, retags and unbinds with add_cluster:contract_mgmt (403 for a member); 400 for no contracts, 422', async () => {
      const body = { clusterId: HUB, displayName: 'Hub A', contractIds: [ID, 8] };
      const cc = `/user/contracts/${ID}/clusters/70`;
      /** Each change with the status it answers the owner. */
      const changes: [string, string, unknown, number][] = [
        ['POST', '/user/contracts/assign-cluster?org=acme', body, 200],
        ['POST', `/user/contracts/${ID}/clusters?org=acme`, [{ cluster: '22222222-bbbb-4bbb-8bbb-222222222222' }], 201],
        ['PATCH', `${cc}/name?org=acme`, { clusterName: 'B renamed' }, 200],
        ['PATCH', `${cc}/tags?org=acme`, { tags: ['silver'] }, 200],
        ['DELETE', `${cc}?org=acme`, undefined, 200],
      ];
      for (const [method, p, b] of changes) expect([method, p, await status('mia', method, p, b)]).toEqual([method, p, 403]);
      expect(backends.contractsLicensing.calls).toEqual([]);
      for (const [method, p, b, ok] of changes) expect([method, p, await status('olivia', method, p, b)]).toEqual([method, p, ok]);
      expect(asked('assignCluster')).toEqual([
        { ownerId: ACME.id, cluster: HUB, displayName: 'Hub A', contractIds: [ID, 8], actor: 'olivia' },
      ]);
      const ref = { id: ID, ccId: 70, ownerId: ACME.id, actor: 'olivia' };
      expect(asked('renameContractCluster')).toEqual([{ ref, name: 'B renamed' }]);
      expect(asked('setContractClusterTags')).toEqual([{ ref, tags: ['silver'] }]);
      expect(asked('unbindCluster')).toEqual([ref]);
      backends.contractsLicensing.reset();
      expect(await status('olivia', 'POST', '/user/contracts/assign-cluster?org=acme', { ...body, contractIds: [] })).toBe(400);
      expect(await status('olivia', 'POST', '/user/contracts/assign-cluster?org=acme', { clusterId: HUB })).toBe(422);
      expect(await status('olivia', 'POST', `/user/contracts/${ID}/clusters?org=acme`, { cluster: HUB })).toBe(422);
      expect(await status('olivia', 'PATCH', `${cc}/name?org=acme`, {})).toBe(422);
      expect(await status('olivia', 'PATCH', `${cc}/tags?org=acme`, { tags: [1] })).toBe(422);
      expect(backends.contractsLicensing.calls).toEqual([]);
      expect(await status('olivia', 'POST', `/user/contracts/${ID}/clusters?org=acme`, [{ cluster: HUB }])).toBe(400);
      expect(await status('mia', 'GET', '/user/contracts/999999/clusters/imported/non-associated?org=acme')).toBe(400);
    });

    it('changes preferences for who authz lets update the contract, its owner handed as a contextual tuple: a single recipient becomes a list; 403 for a member, 422', async () => {
      const p = `/user/contracts/${ID}/preferences?org=acme`;
      const res = await api('olivia', 'PUT', p, { autoAssignCluster: true, usageAlertClient: 'a@acme.example' });
      expect(res).toMatchObject({
        status: 200,
        body: { emails: { licenseUsers: EMAILS.licenseUsers, usageAlertClient: ['a@acme.example'] } },
      });
      expect(Object.keys(res.body.emails).sort()).toEqual(['licenseUsers', 'usageAlertClient']);
      await api('olivia', 'PUT', p, { autoAssignCluster: false });
      expect(asked('setPreferences')).toEqual([
        {
          id: ID,
          ownerId: ACME.id,
          autoAssignCluster: true,
          usageAlertClient: ['a@acme.example'],
          usageAlertClientGiven: true,
          actor: 'olivia',
        },
        { id: ID, ownerId: ACME.id, autoAssignCluster: false, usageAlertClient: [], usageAlertClientGiven: false, actor: 'olivia' },
      ]);
      expect(backends.authz.callsTo('authz', 'check').at(-1)).toEqual({
        tuple: { user: `user:${USERS.olivia.id}`, relation: 'updated_preferences', object: `contract:${ID}` },
        contextualTuples: [{ user: `organization:${ACME.id}`, relation: 'owner', object: `contract:${ID}` }],
      });
      expect(await status('mia', 'PUT', p, { autoAssignCluster: false })).toBe(403);
      expect(await status('olivia', 'PUT', p, { autoAssignCluster: 'yes' })).toBe(422);
      expect(asked('setPreferences')).toHaveLength(2);
    });

    it('answers the audit trail and the document URL of the account’s contract to its members', async () => {
      expect((await api('mia', 'GET', `/user/contracts/${ID}/audit?org=acme`)).body[0]).toMatchObject({
        contractID: ID,
        event: 'contract-created: productdb',
      });
      const url = new URL((await api('mia', 'GET', `/user/contracts/${ID}/document?org=acme`)).body);
      expect(await (await fetch(new URL(url.pathname + url.search, base))).text()).toBe(DOCUMENT);
    });
  });
});
