import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * Contracts for site admins and an account's own contracts over HTTP, as a client
 * walks them (docs/contracts.md): multipart create with a document, list, get, update, extend, the signed
 * document URL, the audit trail, cluster binding against clusters enrolled through
 * POST /orgs/{org}/clusters, tags synced across contracts, statuses, the product catalog, and the user side
 * with its owner scoping and sanitized contracts. Their absence (404) on a self-hosted deployment:
 * apps/gateway/test/contracts-self-hosted.test.ts; the document on S3: apps/gateway/test/contract-documents-s3.test.ts
 * and apps/contracts-licensing/test/contract-documents-s3.int.test.ts; revoking and deleting a contract:
 * apps/gateway/test/contract-ending.test.ts and apps/contracts-licensing/test/contracts.int.test.ts.
 */

const NOW = Math.floor(Date.now() / 1000);
const YEAR = 365 * 24 * 3600;
const HUB_A = '11111111-aaaa-4aaa-8aaa-111111111111';
const HUB_B = '22222222-bbbb-4bbb-8bbb-222222222222';
const HUB_G = '33333333-cccc-4ccc-8ccc-333333333333';
const STRAY = '44444444-dddd-4ddd-8ddd-444444444444';
const DOCUMENT = 'signed contract: every page initialled\n';
const MAX_DOCUMENT = 8 * 1024;

const ADMIN_EMAILS = ['contactPerson', 'signingAuthority', 'financeTeam', 'usageAlertAdmin'];

function form(fields: Record<string, string | string[]>, document?: { body: string | Uint8Array; name: string; type?: string }): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) f.append(k, one);
  if (document) f.append('document', new Blob([document.body], { type: document.type ?? 'text/plain' }), document.name);
  return f;
}

describe('contracts over HTTP on a hosted deployment', () => {
  let t: TestPlatform;
  const api: TestPlatform['api'] = (...args) => t.api(...args);
  const send: TestPlatform['send'] = (...args) => t.send(...args);
  let acme: number;
  /** The contracts of acme made by the create test: productdb (with the document) and productbackup. */
  let db: any;
  let backup: any;

  const audit = async (id: number) =>
    ((await api('root', 'GET', `/contracts/${id}/audit`)).body as { event: string }[]).map((e) => e.event);

  beforeAll(async () => {
    t = await bootTestPlatform({ DEPLOYMENT_TYPE: 'Hosted', CONTRACT_DOCUMENT_MAX_BYTES: String(MAX_DOCUMENT) });
    for (const who of ['olivia', 'mia', 'otto']) await t.signUp(who);
    const org = await api('olivia', 'POST', '/orgs', { username: 'acme' });
    expect(org.status).toBe(201);
    acme = org.body.id;
    expect((await api('otto', 'POST', '/orgs', { username: 'globex' })).status).toBe(201);
    const team = await api('olivia', 'POST', '/orgs/acme/teams', { name: 'readers', type: 'general', permission: 'read' });
    expect((await api('olivia', 'PUT', `/teams/${team.body.id}/members/mia`)).status).toBe(204);
    for (const [name, uid] of [
      ['hub-a', HUB_A],
      ['hub-b', HUB_B],
    ]) {
      const hub = await api('olivia', 'POST', '/orgs/acme/clusters', {
        name,
        uid,
        displayName: name.toUpperCase(),
        status: { phase: 'Ready' },
      });
      expect(hub.status).toBe(201);
    }
    expect((await api('otto', 'POST', '/orgs/globex/clusters', { name: 'hub-g', uid: HUB_G })).status).toBe(201);
  }, 120_000);
  afterAll(() => t?.stop());

  describe('admin', () => {
    it('creates one contract per product from a multipart form with a document: 201 with Contract[]', async () => {
      const body = form(
        {
          name: 'Acme enterprise',
          products: JSON.stringify(['productdb', 'productbackup']),
          emails: JSON.stringify({
            contactPerson: ['carol@acme.example'],
            signingAuthority: ['sam@acme.example'],
            licenseUsers: ['lu@acme.example'],
            financeTeam: ['fin@acme.example'],
            usageAlertClient: ['alerts@acme.example'],
            usageAlertAdmin: ['ops@platform.example'],
          }),
          quota: JSON.stringify({
            enabled: true,
            metric: 'cpu-core-hours',
            limit: 1000,
            alertThresholds: [50, 90],
            disableLicenseOnLimitReached: false,
          }),
          start: String(NOW - 60),
          end: String(NOW + YEAR),
          allowOffline: 'true',
          restrictions: '{"maxNodes":10}',
        },
        { body: DOCUMENT, name: 'acme contract.txt' },
      );
      const res = await send('root', 'POST', '/contracts?org=acme', body);
      expect(res.status).toBe(201);
      expect(res.body.map((c: any) => c.product).sort()).toEqual(['productbackup', 'productdb']);
      [backup, db] = [...res.body].sort((a: any, b: any) => a.product.localeCompare(b.product));
      expect(db).toMatchObject({
        uid: acme,
        orgOrUser: 'acme',
        name: 'Acme enterprise',
        start: NOW - 60,
        end: NOW + YEAR,
        allowOffline: true,
        revoked: false,
        restrictions: '{"maxNodes":10}',
        clusters: [],
        emails: { contactPerson: ['carol@acme.example'], usageAlertAdmin: ['ops@platform.example'], licenseUsers: ['lu@acme.example'] },
        quota: { enabled: true, metric: 'cpu-core-hours', limit: 1000, alertThresholds: [50, 90], disableLicenseOnLimitReached: false },
      });
      expect(db.features.length).toBeGreaterThan(0);
      expect(db.documentPath).not.toBe('');
      expect(backup.documentPath).toBe(db.documentPath);
      expect(await audit(db.id)).toEqual([expect.stringContaining('contract-created')]);
    });

    it('accepts products as repeated fields and emails as nested fields; defaults the owner to the caller', async () => {
      const res = await send(
        'root',
        'POST',
        '/contracts',
        form({ products: ['productvault'], 'emails[licenseUsers]': 'root@example.com', end: String(NOW + YEAR) }),
      );
      expect(res.status).toBe(201);
      expect(res.body).toHaveLength(1);
      expect(res.body[0]).toMatchObject({ orgOrUser: 'root', uid: t.ids.root, product: 'productvault', documentPath: '' });
      expect(res.body[0].emails.licenseUsers).toEqual(['root@example.com']);
    });

    it('answers 401 without a token and 403 for a caller who is not a site admin', async () => {
      const body = form({ products: 'productdb', end: String(NOW + YEAR) });
      expect((await send(undefined, 'POST', '/contracts?org=acme', body)).status).toBe(401);
      expect((await send('olivia', 'POST', '/contracts?org=acme', body)).status).toBe(403);
      expect((await api('olivia', 'GET', '/contracts?org=acme')).status).toBe(403);
      expect((await api(undefined, 'GET', '/contracts')).status).toBe(401);
    });

    it('refuses the domain errors with 400: empty products, an invalid email, an unsupported product, a bad quota', async () => {
      const end = String(NOW + YEAR);
      const bad = async (fields: Record<string, string>) => send('root', 'POST', '/contracts?org=acme', form({ end, ...fields }));
      expect((await bad({ products: '[]' })).status).toBe(400);
      expect((await bad({ products: 'productdb', emails: '{"financeTeam":["not-an-email"]}' })).status).toBe(400);
      expect((await bad({ products: 'productnone' })).status).toBe(400);
      expect((await bad({ products: 'productdb', quota: '{"limit":-1}' })).status).toBe(400);
      expect((await bad({ products: 'productdb', quota: '{"metric":"parsecs","limit":1}' })).status).toBe(400);
      expect((await bad({ products: 'productdb', quota: '{"metric":"cpu-core-hours","limit":1,"alertThresholds":[0]}' })).status).toBe(400);
      expect((await bad({ products: 'productdb', quota: '{"metric":"cpu-core-hours","limit":1,"alertThresholds":[101]}' })).status).toBe(
        400,
      );
    });

    it('answers an empty products list 400 however it comes: no products field (repeated fields, none sent), an empty one, []', async () => {
      // The contracts of these two tests are for an account of their own, which no other test lists.
      await t.signUp('quinn');
      const end = String(NOW + YEAR);
      for (const fields of [{ end }, { end, products: '' }, { end, products: '[]' }, {}] as Record<string, string>[]) {
        const res = await send('root', 'POST', '/contracts?org=quinn', form(fields));
        expect({ fields, status: res.status, message: res.body.message }).toEqual({
          fields,
          status: 400,
          message: 'products: at least one product is required',
        });
      }
      expect((await api('root', 'GET', '/contracts?org=quinn')).body).toEqual([]);
      const doc = (await api(undefined, 'GET', '/openapi.json')).body;
      expect(doc.components.schemas.CreateContractForm.required ?? []).not.toContain('products');
    });

    it('takes the quota metrics the product’s clients send (cpu_core_month, memory_gib_month), answered as sent; the document lists them', async () => {
      const end = String(NOW + YEAR);
      const made: number[] = [];
      for (const metric of ['memory_gib_month', 'cpu_core_month']) {
        const quota = { enabled: true, metric, limit: 100 };
        const res = await send('root', 'POST', '/contracts?org=quinn', form({ products: 'productdb', end, quota: JSON.stringify(quota) }));
        expect({ metric, status: res.status }).toEqual({ metric, status: 201 });
        expect(res.body[0].quota).toEqual({ ...quota, alertThresholds: [], disableLicenseOnLimitReached: false });
        expect((await api('root', 'GET', `/contracts/${res.body[0].id}`)).body.quota.metric).toBe(metric);
        made.push(res.body[0].id);
      }
      // The hour-based names are still taken, and an update may change one for the other.
      const hours = await send(
        'root',
        'POST',
        '/contracts?org=quinn',
        form({ products: 'productvault', end, quota: '{"enabled":true,"metric":"cpu-core-hours","limit":5}' }),
      );
      expect(hours.status).toBe(201);
      expect(hours.body[0].quota.metric).toBe('cpu-core-hours');
      const quota = { enabled: true, metric: 'cpu_core_month', limit: 3, alertThresholds: [80], disableLicenseOnLimitReached: true };
      const updated = await send('root', 'PUT', `/contracts/${hours.body[0].id}`, form({ quota: JSON.stringify(quota) }));
      expect(updated.status).toBe(200);
      expect(updated.body.quota).toEqual(quota);
      const wrong = await send(
        'root',
        'POST',
        '/contracts?org=quinn',
        form({ products: 'productdb', end, quota: '{"enabled":true,"metric":"cpu-core-month","limit":1}' }),
      );
      expect(wrong.status).toBe(400);
      expect(wrong.body.message).toMatch(/^quota\.metric: must be one of cpu_core_month, memory_gib_month, /);

      const doc = (await api(undefined, 'GET', '/openapi.json')).body;
      for (const form of ['CreateContractForm', 'UpdateContractForm']) {
        const field = doc.components.schemas[form].properties.quota;
        expect(field).toMatchObject({ type: 'string', contentMediaType: 'application/json' });
        expect(field.contentSchema.properties.metric.enum).toEqual(
          expect.arrayContaining([
            'cpu_core_month',
            'memory_gib_month',
            'cpu-core-hours',
            'memory-gib-hours',
            'storage-gib-hours',
            'object-hours',
          ]),
        );
      }
      for (const id of [...made, hours.body[0].id]) expect((await api('root', 'DELETE', `/contracts/${id}`)).status).toBe(200);
    });

    it('refuses a malformed body with 422 (no form, broken JSON in a field, a wrong type, an unknown field) and JSON with 415', async () => {
      const end = String(NOW + YEAR);
      const res = await send('root', 'POST', '/contracts?org=acme', undefined);
      expect(res.status).toBe(422);
      expect((await send('root', 'POST', '/contracts?org=acme', form({ products: 'productdb', end, emails: '{broken' }))).status).toBe(422);
      expect((await send('root', 'POST', '/contracts?org=acme', form({ products: 'productdb', end, allowOffline: 'maybe' }))).status).toBe(
        422,
      );
      expect((await send('root', 'POST', '/contracts?org=acme', form({ products: 'productdb', end: 'tomorrow' }))).status).toBe(422);
      expect((await send('root', 'POST', '/contracts?org=acme', form({ products: 'productdb', end, owner: 'x' }))).status).toBe(422);
      expect(
        (await send('root', 'POST', '/contracts?org=acme', form({ products: 'productdb', end, emails: '{"cc":["a@b.c"]}' }))).status,
      ).toBe(422);
      const json = await api('root', 'POST', '/contracts?org=acme', { products: ['productdb'], end: NOW + YEAR });
      expect(json.status).toBe(415);
    });

    it('refuses a document over CONTRACT_DOCUMENT_MAX_BYTES with 413', async () => {
      const big = new Uint8Array(MAX_DOCUMENT + 1).fill(65);
      const res = await send(
        'root',
        'POST',
        '/contracts?org=acme',
        form({ products: 'productdb', end: String(NOW + YEAR) }, { body: big, name: 'big.pdf' }),
      );
      expect(res.status).toBe(413);
      expect((await api('root', 'GET', '/contracts?org=acme')).body).toHaveLength(2);
    });

    it('lists the contracts of the org account (default: the caller’s own), gets one, 404 for an unknown one, 400 for a bad id', async () => {
      const list = await api('root', 'GET', '/contracts?org=acme');
      expect(list.status).toBe(200);
      expect(list.body.map((c: any) => c.id).sort()).toEqual([db.id, backup.id].sort());
      const own = await api('root', 'GET', '/contracts');
      expect(own.body.map((c: any) => c.product)).toEqual(['productvault']);
      const one = await api('root', 'GET', `/contracts/${db.id}`);
      expect(one).toMatchObject({ status: 200, body: { id: db.id, product: 'productdb' } });
      expect((await api('root', 'GET', '/contracts/999999')).status).toBe(404);
      expect((await api('root', 'GET', '/contracts/abc')).status).toBe(400);
      // With org, the contract must be that account's.
      expect((await api('root', 'GET', `/contracts/${db.id}?org=globex`)).status).toBe(404);
    });

    it('answers the product catalog to site admins', async () => {
      const res = await api('root', 'GET', '/contracts/available_products');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(expect.arrayContaining(['productdb', 'productbackup', 'productvault', 'productingress']));
      expect((await api('olivia', 'GET', '/contracts/available_products')).status).toBe(403);
    });

    it('updates the given fields and the document (multipart); 400 for bad emails or quota, 404, 422', async () => {
      const res = await send(
        'root',
        'PUT',
        `/contracts/${db.id}`,
        form({ name: 'Acme DB', autoAssignCluster: 'true' }, { body: 'second version\n', name: 'v2.txt' }),
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: db.id, name: 'Acme DB', autoAssignCluster: true, allowOffline: true });
      expect(res.body.emails.contactPerson).toEqual(['carol@acme.example']);
      expect(res.body.documentPath).not.toBe(db.documentPath);
      db = res.body;
      expect((await send('root', 'PUT', `/contracts/${db.id}`, form({ emails: '{"licenseUsers":["nope"]}' }))).status).toBe(400);
      expect((await send('root', 'PUT', `/contracts/${db.id}`, form({ quota: '{"limit":-5}' }))).status).toBe(400);
      expect((await send('root', 'PUT', '/contracts/999999', form({ name: 'x' }))).status).toBe(404);
      expect((await send('root', 'PUT', `/contracts/${db.id}`, form({ quota: 'not json' }))).status).toBe(422);
      expect((await send('olivia', 'PUT', `/contracts/${db.id}`, form({ name: 'x' }))).status).toBe(403);
      expect((await audit(db.id)).at(-1)).toMatch(/contract-updated/);
    });

    it('extends a contract from a Contract body of which only `end` counts; 404, 422', async () => {
      const end = NOW + 2 * YEAR;
      const res = await api('root', 'POST', `/contracts/${db.id}/extend`, { ...db, end, name: 'ignored' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ end, name: 'Acme DB' });
      expect((await api('root', 'POST', '/contracts/999999/extend', { end })).status).toBe(404);
      expect((await api('root', 'POST', `/contracts/${db.id}/extend`, { end: 'later' })).status).toBe(422);
      expect((await api('olivia', 'POST', `/contracts/${db.id}/extend`, { end })).status).toBe(403);
      expect((await audit(db.id)).at(-1)).toMatch(/contract-extended/);
    });

    it('answers the document as a URL signed for 30 minutes that downloads it without a token; a tampered URL is refused', async () => {
      const res = await api('root', 'GET', `/contracts/${db.id}/document`);
      expect(res.status).toBe(200);
      expect(typeof res.body).toBe('string');
      const url = new URL(res.body);
      const expires = Number(url.searchParams.get('expires'));
      expect(expires).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 30 * 60 - 5);
      expect(expires).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 30 * 60 + 1);
      const download = await fetch(url);
      expect(download.status).toBe(200);
      expect(await download.text()).toBe('second version\n');
      expect(download.headers.get('content-disposition')).toMatch(/^attachment/);

      const forged = new URL(url);
      forged.searchParams.set('expires', String(expires + 3600));
      expect((await fetch(forged)).status).toBe(403);
      const tampered = new URL(url);
      const sig = tampered.searchParams.get('signature')!;
      tampered.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
      expect((await fetch(tampered)).status).toBe(403);
      const unsigned = new URL(url);
      unsigned.search = '';
      expect((await fetch(unsigned)).status).toBe(403);

      const own = (await api('root', 'GET', '/contracts')).body[0];
      expect((await api('root', 'GET', `/contracts/${own.id}/document`)).status).toBe(404);
      expect((await api('root', 'GET', '/contracts/999999/document')).status).toBe(404);
      expect((await api('olivia', 'GET', `/contracts/${db.id}/document`)).status).toBe(403);
    });

    it('binds enrolled clusters with their inventory status; 400 for an empty list, a non-UUID, one already bound; 422', async () => {
      const res = await api('root', 'POST', `/contracts/${db.id}/clusters`, [{ cluster: HUB_A, displayName: 'Hub A', tags: ['prod'] }]);
      expect(res.status).toBe(201);
      expect(res.body).toEqual([
        expect.objectContaining({
          contractId: db.id,
          cluster: HUB_A,
          displayName: 'Hub A',
          clusterStatus: expect.objectContaining({ isImported: true, tags: ['prod'], associatedContractId: db.id }),
          duplicateContractFeatures: [],
        }),
      ]);
      expect(res.body[0].id).toBeGreaterThan(0);
      expect((await api('root', 'POST', `/contracts/${db.id}/clusters`, [])).status).toBe(400);
      expect((await api('root', 'POST', `/contracts/${db.id}/clusters`, [{ cluster: 'not-a-uuid' }])).status).toBe(400);
      expect((await api('root', 'POST', `/contracts/${db.id}/clusters`, [{ cluster: HUB_A }])).status).toBe(400);
      expect((await api('root', 'POST', `/contracts/${db.id}/clusters`, { cluster: HUB_A })).status).toBe(422);
      expect((await api('olivia', 'POST', `/contracts/${db.id}/clusters`, [{ cluster: HUB_B }])).status).toBe(403);

      const listed = await api('root', 'GET', `/contracts/${db.id}/clusters`);
      expect(listed.body.map((c: any) => c.cluster)).toEqual([HUB_A]);
      expect((await api('root', 'GET', `/contracts/${db.id}`)).body.clusters).toHaveLength(1);
      expect(await audit(db.id)).toContainEqual(expect.stringContaining(`cluster-bound: ${HUB_A}`));
    });

    it('lists the owner’s enrolled clusters not bound to the contract; 400 for an unknown contract', async () => {
      const res = await api('root', 'GET', `/contracts/${db.id}/clusters/imported/non-associated`);
      expect(res.status).toBe(200);
      expect(res.body.map((c: any) => c.uid)).toEqual([HUB_B]);
      expect(res.body[0]).toMatchObject({ name: 'hub-b', displayName: 'HUB-B', status: { phase: 'Ready' } });
      expect((await api('root', 'GET', '/contracts/999999/clusters/imported/non-associated')).status).toBe(400);
    });

    it('renames a bound cluster and syncs its tags across contracts bound to the same cluster UUID', async () => {
      const bound = await api('root', 'POST', `/contracts/${backup.id}/clusters`, [{ cluster: HUB_A }]);
      expect(bound.status).toBe(201);
      const [ccDb] = (await api('root', 'GET', `/contracts/${db.id}/clusters`)).body;

      expect((await api('root', 'PATCH', `/contracts/${db.id}/clusters/${ccDb.id}/name`, { clusterName: 'Hub A prime' })).status).toBe(200);
      // The name the contract gives the cluster; the cluster's own name stays the inventory's.
      const renamed = (await api('root', 'GET', `/contracts/${db.id}/clusters`)).body.find((c: any) => c.id === ccDb.id);
      expect(renamed).toMatchObject({ displayName: 'Hub A prime', clusterStatus: { name: 'hub-a' } });
      expect((await api('root', 'PATCH', `/contracts/${db.id}/clusters/${ccDb.id}/name`, { name: 'x' })).status).toBe(422);
      expect((await api('olivia', 'PATCH', `/contracts/${db.id}/clusters/${ccDb.id}/name`, { clusterName: 'x' })).status).toBe(403);

      expect((await api('root', 'PATCH', `/contracts/${db.id}/clusters/${ccDb.id}/tags`, { tags: ['gold', 'eu'] })).status).toBe(200);
      expect((await api('root', 'PATCH', `/contracts/${db.id}/clusters/${ccDb.id}/tags`, { tags: 'gold' })).status).toBe(422);
      expect((await api('olivia', 'PATCH', `/contracts/${db.id}/clusters/${ccDb.id}/tags`, { tags: [] })).status).toBe(403);
      const other = (await api('root', 'GET', `/contracts/${backup.id}/clusters`)).body;
      expect(other[0].clusterStatus.tags).toEqual(['gold', 'eu']);
      const events = await audit(db.id);
      expect(events).toContainEqual(expect.stringContaining('cluster-renamed'));
      expect(events).toContainEqual(expect.stringContaining('cluster-tags'));
      expect(await audit(backup.id)).toContainEqual(expect.stringContaining('cluster-tags'));
    });

    it('takes the whole Contract back as GET answers it, one field edited; a read-only field changed is 400 naming it, nothing changed', async () => {
      const read = (await api('root', 'GET', `/contracts/${db.id}`)).body;
      expect(read.clusters.length).toBeGreaterThan(0);
      // As the product's clients send it: every field of the Contract, objects and lists as JSON text.
      const asForm = (c: Record<string, unknown>) =>
        form(Object.fromEntries(Object.entries(c).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])));
      const res = await send('root', 'PUT', `/contracts/${db.id}`, asForm({ ...read, name: 'Acme DB edited' }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...read, name: 'Acme DB edited' });
      const edited = res.body;

      for (const [field, value] of [
        ['product', 'productvault'],
        ['id', read.id + 1],
        ['uid', read.uid + 1],
        ['orgOrUser', 'globex'],
        ['revoked', true],
        ['documentPath', 'contracts/documents/elsewhere.pdf'],
        ['clusters', []],
        ['clusters', read.clusters.map((c: any) => ({ ...c, displayName: 'renamed by PUT' }))],
      ] as const) {
        const refused = await send('root', 'PUT', `/contracts/${db.id}`, asForm({ ...edited, name: 'not this', [field]: value }));
        expect([field, refused.status]).toEqual([field, 400]);
        expect(refused.body.errors).toEqual([expect.objectContaining({ field })]);
        expect(refused.body.message).not.toMatch(/unrecognized/i);
      }
      expect((await api('root', 'GET', `/contracts/${db.id}`)).body).toEqual(edited);
    });

    it('answers the status of bound clusters, one or a batch, for an account', async () => {
      const one = await api('root', 'GET', `/contracts/active/associated-clusters/${HUB_A}/status?orgOrUserId=${acme}&contract=${db.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ cluster: HUB_A, contractId: db.id, clusterStatus: { isImported: true } });
      const viaOrg = await api('root', 'GET', `/contracts/active/associated-clusters/${HUB_A}/status?org=acme`);
      expect(viaOrg.body.id).toBeGreaterThan(0);
      const batch = await api('root', 'POST', `/contracts/active/associated-clusters/batch-status?org=acme`, { clusters: [HUB_A, HUB_B] });
      expect(batch.status).toBe(200);
      expect(batch.body.map((c: any) => c.cluster)).toEqual([HUB_A, HUB_B]);
      expect(batch.body[1].id).toBe(0);
      expect((await api('root', 'POST', '/contracts/active/associated-clusters/batch-status', { clusters: 'x' })).status).toBe(422);
      expect((await api('olivia', 'GET', `/contracts/active/associated-clusters/${HUB_A}/status`)).status).toBe(403);
      expect((await api('root', 'GET', '/contracts/active/associated-clusters/not-a-uuid/status')).status).toBe(400);
    });

    it('unbinds a cluster by its contract-cluster id', async () => {
      const [cc] = (await api('root', 'GET', `/contracts/${backup.id}/clusters`)).body;
      expect((await api('olivia', 'DELETE', `/contracts/${backup.id}/clusters/${cc.id}`)).status).toBe(403);
      expect((await api('root', 'DELETE', `/contracts/${backup.id}/clusters/${cc.id}`)).status).toBe(200);
      expect((await api('root', 'GET', `/contracts/${backup.id}/clusters`)).body).toEqual([]);
      expect(await audit(backup.id)).toContainEqual(expect.stringContaining(`cluster-unbound: ${HUB_A}`));
    });

    it('keeps the audit trail to site admins (and contract_mgmt holders of the org given)', async () => {
      expect((await api('olivia', 'GET', `/contracts/${db.id}/audit`)).status).toBe(403);
      expect((await api('olivia', 'GET', `/contracts/${db.id}/audit?org=acme`)).status).toBe(403);
      const res = await api('root', 'GET', `/contracts/${db.id}/audit?org=acme`);
      expect(res.status).toBe(200);
      expect(res.body[0]).toEqual({
        id: expect.any(Number),
        contractID: db.id,
        addedBy: 'root',
        event: expect.any(String),
        createdUnix: expect.any(Number),
      });
      expect((await api('root', 'GET', '/contracts/999999/audit')).status).toBe(404);
    });
  });

  describe('user', () => {
    let offline: any;

    beforeAll(async () => {
      const made = await send(
        'root',
        'POST',
        '/contracts?org=acme',
        form({ products: 'productingress', end: String(NOW + YEAR), emails: '{"contactPerson":["c@acme.example"]}' }),
      );
      expect(made.status).toBe(201);
      offline = made.body[0];
    });

    const sanitized = (c: any) => {
      for (const key of ADMIN_EMAILS) expect(c.emails).not.toHaveProperty(key);
      expect(Object.keys(c.emails).sort()).toEqual(['licenseUsers', 'usageAlertClient']);
    };

    it('lists the org’s contracts to its members, sanitized; the caller’s own without org; 401, 403 for a non-member', async () => {
      const res = await api('mia', 'GET', '/user/contracts?org=acme');
      expect(res.status).toBe(200);
      expect(res.body.map((c: any) => c.id).sort()).toEqual([db.id, backup.id, offline.id].sort());
      res.body.forEach(sanitized);
      expect(res.body.find((c: any) => c.id === db.id).emails).toEqual({
        licenseUsers: ['lu@acme.example'],
        usageAlertClient: ['alerts@acme.example'],
      });
      expect((await api('olivia', 'GET', '/user/contracts')).body).toEqual([]);
      expect((await api(undefined, 'GET', '/user/contracts?org=acme')).status).toBe(401);
      expect((await api('otto', 'GET', '/user/contracts?org=acme')).status).toBe(403);
      // An org the caller cannot act for is 403, unknown or not: the answer does not tell which.
      expect((await api('mia', 'GET', '/user/contracts?org=nosuchorg')).status).toBe(403);
    });

    it('gets one sanitized contract; another account’s contract is not readable (404, 403 where the spec says so)', async () => {
      const res = await api('mia', 'GET', `/user/contracts/${db.id}?org=acme`);
      expect(res.status).toBe(200);
      sanitized(res.body);
      expect((await api('otto', 'GET', `/user/contracts/${db.id}?org=globex`)).status).toBe(404);
      expect((await api('otto', 'GET', `/user/contracts/${db.id}`)).status).toBe(404);
      expect((await api('otto', 'GET', `/user/contracts/${db.id}?org=acme`)).status).toBe(403);
      expect((await api('otto', 'GET', `/user/contracts/${db.id}/audit?org=globex`)).status).toBe(403);
      expect((await api('otto', 'GET', `/user/contracts/${db.id}/clusters?org=globex`)).status).toBe(403);
      expect((await api('otto', 'GET', `/user/contracts/${db.id}/document?org=globex`)).status).toBe(404);
      expect((await api('mia', 'GET', '/user/contracts/999999?org=acme')).status).toBe(404);
    });

    it('lists the active offline contracts', async () => {
      const res = await api('mia', 'GET', '/user/contracts/active-offline-contracts?org=acme');
      expect(res.status).toBe(200);
      expect(res.body.map((c: any) => c.id).sort()).toEqual([db.id, backup.id].sort());
      res.body.forEach(sanitized);
    });

    it('assigns one cluster to several contracts at once (add_cluster:contract_mgmt); 400 for an empty list or a non-UUID; 422', async () => {
      const body = { clusterId: HUB_B, displayName: 'Hub B', contractIds: [db.id, offline.id] };
      expect((await api('mia', 'POST', '/user/contracts/assign-cluster?org=acme', body)).status).toBe(403);
      expect((await api('otto', 'POST', '/user/contracts/assign-cluster?org=acme', body)).status).toBe(403);
      expect((await api('olivia', 'POST', '/user/contracts/assign-cluster?org=acme', body)).status).toBe(200);
      for (const id of [db.id, offline.id]) {
        const clusters = (await api('mia', 'GET', `/user/contracts/${id}/clusters?org=acme`)).body;
        expect(clusters.map((c: any) => c.cluster)).toContain(HUB_B);
      }
      expect((await api('olivia', 'POST', '/user/contracts/assign-cluster?org=acme', { ...body, contractIds: [] })).status).toBe(400);
      expect((await api('olivia', 'POST', '/user/contracts/assign-cluster?org=acme', { ...body, clusterId: 'nope' })).status).toBe(400);
      expect((await api('olivia', 'POST', '/user/contracts/assign-cluster?org=acme', { clusterId: HUB_B })).status).toBe(422);
      // Another account's contract cannot be named.
      expect((await api('otto', 'POST', '/user/contracts/assign-cluster?org=globex', { ...body, clusterId: HUB_G })).status).toBe(400);
    });

    it('lists the active contracts a cluster is and is not bound to, with the cluster in context', async () => {
      const bound = await api('mia', 'GET', `/user/contracts/active/associated-with/clusters/${HUB_B}?org=acme`);
      expect(bound.status).toBe(200);
      expect(bound.body.map((c: any) => c.id).sort()).toEqual([db.id, offline.id].sort());
      expect(bound.body[0].associatedCluster).toMatchObject({ cluster: HUB_B });
      bound.body.forEach(sanitized);
      const offlineOnly = await api('mia', 'GET', `/user/contracts/active/associated-with/clusters/${HUB_B}?org=acme&onlyOffline=true`);
      expect(offlineOnly.body.map((c: any) => c.id)).toEqual([db.id]);
      const notBound = await api('mia', 'GET', `/user/contracts/active/not-associated-with/clusters/${HUB_B}?org=acme`);
      expect(notBound.body.map((c: any) => c.id)).toEqual([backup.id]);
      expect((await api('mia', 'GET', '/user/contracts/active/not-associated-with/clusters/nope?org=acme')).status).toBe(400);
    });

    it('lists the clusters bound to active contracts with the contracts of each', async () => {
      const res = await api('mia', 'GET', '/user/contracts/active/associated-clusters?org=acme');
      expect(res.status).toBe(200);
      const b = res.body.find((c: any) => c.cluster === HUB_B);
      expect(b.associatedContractIDs.sort()).toEqual([db.id, offline.id].sort());
      expect(b).toEqual({ cluster: HUB_B, displayName: 'Hub B', tags: [], associatedContractIDs: expect.any(Array) });
      expect(res.body.find((c: any) => c.cluster === HUB_A).associatedContractIDs).toEqual([db.id]);
    });

    it('answers the status of bound clusters, one or a batch', async () => {
      const one = await api('mia', 'GET', `/user/contracts/active/associated-clusters/${HUB_B}/status?org=acme&contract=${offline.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ cluster: HUB_B, contractId: offline.id, clusterStatus: { isImported: true } });
      const batch = await api('mia', 'POST', '/user/contracts/active/associated-clusters/batch-status?org=acme', {
        clusters: [HUB_A, STRAY],
      });
      expect(batch.status).toBe(200);
      expect(batch.body.map((c: any) => [c.cluster, c.id > 0])).toEqual([
        [HUB_A, true],
        [STRAY, false],
      ]);
      expect((await api('mia', 'POST', '/user/contracts/active/associated-clusters/batch-status?org=acme', [HUB_A])).status).toBe(422);
      // Another account sees no binding of acme's.
      const foreign = await api('otto', 'GET', `/user/contracts/active/associated-clusters/${HUB_A}/status?org=globex`);
      expect(foreign.body.id).toBe(0);
    });

    it('changes preferences (updated_preferences:contracts): a single recipient becomes a list; 400 invalid recipients; 403; 422', async () => {
      const res = await api('olivia', 'PUT', `/user/contracts/${offline.id}/preferences?org=acme`, {
        autoAssignCluster: true,
        usageAlertClient: 'alerts@acme.example',
      });
      expect(res.status).toBe(200);
      sanitized(res.body);
      expect(res.body).toMatchObject({ autoAssignCluster: true, emails: { usageAlertClient: ['alerts@acme.example'] } });
      const list = await api('olivia', 'PUT', `/user/contracts/${offline.id}/preferences?org=acme`, {
        usageAlertClient: ['a@acme.example', 'b@acme.example'],
      });
      expect(list.body.emails.usageAlertClient).toEqual(['a@acme.example', 'b@acme.example']);
      expect((await api('olivia', 'PUT', `/user/contracts/${offline.id}/preferences?org=acme`, { usageAlertClient: 'nope' })).status).toBe(
        400,
      );
      expect((await api('olivia', 'PUT', `/user/contracts/${offline.id}/preferences?org=acme`, { autoAssignCluster: 'yes' })).status).toBe(
        422,
      );
      expect((await api('mia', 'PUT', `/user/contracts/${offline.id}/preferences?org=acme`, { autoAssignCluster: false })).status).toBe(
        403,
      );
      expect((await api('otto', 'PUT', `/user/contracts/${offline.id}/preferences?org=globex`, { autoAssignCluster: false })).status).toBe(
        403,
      );
      // The admin-only lists are untouched.
      expect((await api('root', 'GET', `/contracts/${offline.id}`)).body.emails.contactPerson).toEqual(['c@acme.example']);
      expect((await audit(offline.id)).at(-1)).toMatch(/preferences-updated/);
    });

    it('shows the audit trail of the account’s contracts', async () => {
      const res = await api('mia', 'GET', `/user/contracts/${offline.id}/audit?org=acme`);
      expect(res.status).toBe(200);
      expect(res.body.map((e: any) => e.event)).toEqual(
        expect.arrayContaining([expect.stringContaining('contract-created'), expect.stringContaining('preferences-updated')]),
      );
      expect((await api('mia', 'GET', '/user/contracts/999999/audit?org=acme')).status).toBe(403);
    });

    it('answers the document URL, which downloads without a token', async () => {
      const res = await api('mia', 'GET', `/user/contracts/${db.id}/document?org=acme`);
      expect(res.status).toBe(200);
      expect(await (await fetch(res.body)).text()).toBe('second version\n');
      expect((await api('mia', 'GET', `/user/contracts/${offline.id}/document?org=acme`)).status).toBe(404);
    });

    it('binds clusters (add_cluster:contract_mgmt); 400 for an empty list, a non-UUID, another account’s contract, one already bound', async () => {
      const path = `/user/contracts/${backup.id}/clusters?org=acme`;
      expect((await api('mia', 'POST', path, [{ cluster: HUB_B }])).status).toBe(403);
      const res = await api('olivia', 'POST', path, [{ cluster: HUB_B, tags: ['blue'] }]);
      expect(res.status).toBe(201);
      expect(res.body.map((c: any) => c.cluster)).toEqual([HUB_B]);
      expect((await api('olivia', 'POST', path, [])).status).toBe(400);
      expect((await api('olivia', 'POST', path, [{ cluster: '12' }])).status).toBe(400);
      expect((await api('olivia', 'POST', path, [{ cluster: HUB_B }])).status).toBe(400);
      expect((await api('otto', 'POST', `/user/contracts/${backup.id}/clusters?org=globex`, [{ cluster: HUB_G }])).status).toBe(400);
      expect((await api('olivia', 'POST', path, { cluster: HUB_B })).status).toBe(422);
    });

    it('lists the account’s clusters not bound to a contract; 400 for an unknown one', async () => {
      const res = await api('mia', 'GET', `/user/contracts/${offline.id}/clusters/imported/non-associated?org=acme`);
      expect(res.status).toBe(200);
      expect(res.body.map((c: any) => c.uid)).toEqual([HUB_A]);
      expect((await api('mia', 'GET', '/user/contracts/999999/clusters/imported/non-associated?org=acme')).status).toBe(400);
      expect((await api('otto', 'GET', `/user/contracts/${offline.id}/clusters/imported/non-associated?org=globex`)).status).toBe(400);
    });

    it('renames, retags (synced across the account’s contracts) and unbinds clusters with add_cluster:contract_mgmt; a reader and another account get 403', async () => {
      const [cc] = (await api('mia', 'GET', `/user/contracts/${backup.id}/clusters?org=acme`)).body;
      const base = `/user/contracts/${backup.id}/clusters/${cc.id}`;
      // mia only reads: changing a binding takes what binding takes.
      expect((await api('mia', 'PATCH', `${base}/name?org=acme`, { clusterName: 'B renamed' })).status).toBe(403);
      expect((await api('mia', 'PATCH', `${base}/tags?org=acme`, { tags: ['silver'] })).status).toBe(403);
      expect((await api('mia', 'DELETE', `${base}?org=acme`)).status).toBe(403);
      expect((await api('olivia', 'PATCH', `${base}/name?org=acme`, { clusterName: 'B renamed' })).status).toBe(200);
      const renamed = (await api('mia', 'GET', `/user/contracts/${backup.id}/clusters?org=acme`)).body.find((c: any) => c.id === cc.id);
      expect(renamed).toMatchObject({ displayName: 'B renamed', clusterStatus: { name: 'hub-b' } });
      expect((await api('olivia', 'PATCH', `${base}/name?org=acme`, {})).status).toBe(422);
      expect((await api('otto', 'PATCH', `${base}/name?org=globex`, { clusterName: 'mine' })).status).toBe(403);

      expect((await api('olivia', 'PATCH', `${base}/tags?org=acme`, { tags: ['silver'] })).status).toBe(200);
      expect((await api('olivia', 'PATCH', `${base}/tags?org=acme`, { tags: [1] })).status).toBe(422);
      expect((await api('otto', 'PATCH', `${base}/tags?org=globex`, { tags: [] })).status).toBe(403);
      for (const id of [db.id, offline.id]) {
        const b = (await api('mia', 'GET', `/user/contracts/${id}/clusters?org=acme`)).body.find((c: any) => c.cluster === HUB_B);
        expect(b.clusterStatus.tags).toEqual(['silver']);
      }

      expect((await api('otto', 'DELETE', `${base}?org=globex`)).status).toBe(403);
      expect((await api('olivia', 'DELETE', `${base}?org=acme`)).status).toBe(200);
      expect((await api('mia', 'GET', `/user/contracts/${backup.id}/clusters?org=acme`)).body).toEqual([]);
      const events = (await api('mia', 'GET', `/user/contracts/${backup.id}/audit?org=acme`)).body.map((e: any) => e.event);
      for (const kind of ['cluster-bound', 'cluster-renamed', 'cluster-tags', 'cluster-unbound'])
        expect(events).toContainEqual(expect.stringContaining(kind));
    });
  });
});
