import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Every URL a caller sets (websites, multi-cluster-manager endpoints) is http:// or https:// (apps/gateway/src/web-url.ts):
// any other scheme is refused as the row refuses a bad body, naming the field, before any backend is asked to write;
// http(s) and "" (clearing it) are taken as before. Stand-in backends record each write.

const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true, allowCreateOrganization: true });
const ORG = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'acme', visibility: 'public' });

/** Values no web page may link to. */
const NOT_WEB = [
  'javascript:alert(1)',
  'JavaScript:alert(document.cookie)',
  'data:text/html,<script>alert(1)</script>',
  'ftp://files.example.com/',
  'vbscript:msgbox(1)',
  'acme.example.com',
];
const WEB = ['https://acme.example.com/about', 'http://acme.example.com', ''];

describe('URL fields at the edge', () => {
  let base: string;
  let close: () => void;
  let backends: FakeBackends;
  /** Every write a backend was asked for, as `rpc url`. */
  const writes: string[] = [];

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: async () => ({ user: ROOT, tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: ['all'] }),
          getUser: async () => ROOT,
          editUser: async (req) => {
            writes.push(`editUser ${req.website}`);
            return ROOT;
          },
          editUserSettings: async (req) => {
            writes.push(`editUserSettings ${req.website}`);
            return ROOT;
          },
        },
        organizations: {
          getOrg: async () => ORG,
          createOrg: async (req) => {
            writes.push(`createOrg ${req.website}`);
            return ORG;
          },
          editOrg: async (req) => {
            // A PATCH sends only what it changes.
            writes.push(`editOrg ${req.website ?? req.managerEndpoint}`);
            return ORG;
          },
        },
      },
      authz: {
        authz: {
          checkPermission: async () => ({ allowed: true, dependsOn: [] }),
          check: async () => ({ allowed: true, dependsOn: [] }),
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const send = async (row: string, body: unknown) => {
    const [method, path] = row.split(' ');
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: 'token root', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as { message: string; errors?: { field: string }[] } };
  };

  /** Each row with a URL field: the body around a value, the status a bad body gets there, and the write it makes. */
  const ROWS: { row: string; field: string; body: (url: string) => object; refusedWith: number; write?: (url: string) => string }[] = [
    { row: 'PATCH /orgs/acme', field: 'website', body: (website) => ({ website }), refusedWith: 422, write: (u) => `editOrg ${u}` },
    {
      row: 'PATCH /orgs/acme',
      field: 'managerManagementClusterEndPoint',
      body: (url) => ({ managerManagementClusterEndPoint: url }),
      refusedWith: 422,
      write: (u) => `editOrg ${u}`,
    },
    {
      row: 'POST /orgs',
      field: 'website',
      body: (website) => ({ username: 'acme', website }),
      refusedWith: 422,
      write: (u) => `createOrg ${u}`,
    },
    {
      row: 'POST /admin/users/root/orgs',
      field: 'website',
      body: (website) => ({ username: 'acme', website }),
      refusedWith: 422,
      write: (u) => `createOrg ${u}`,
    },
    { row: 'PATCH /admin/users/bob', field: 'website', body: (website) => ({ website }), refusedWith: 422, write: (u) => `editUser ${u}` },
    {
      row: 'PATCH /user/settings',
      field: 'website',
      body: (website) => ({ website }),
      refusedWith: 422,
      write: (u) => `editUserSettings ${u}`,
    },
    {
      row: 'POST /user/client/create',
      field: 'clientOrg.website',
      body: (website) => ({
        clientOrg: { orgName: 'client', website },
        hubClusterUID: 'hub',
        hubClusterOwnerName: 'acme',
        userPermission: { username: 'client-admin', email: 'admin@client.example.com', password: 'client-password' },
      }),
      refusedWith: 422,
    },
    {
      row: 'POST /admin/orgs/import',
      field: 'organizations.0.website',
      body: (website) => ({ organizations: [{ name: 'imported', website }] }),
      refusedWith: 422,
    },
    // The spec calls a bad enrolment an invalid cluster: 400, as every other bad field of this row.
    { row: 'POST /orgs/acme/clusters', field: 'managerEndpoint', body: (url) => ({ name: 'hub', managerEndpoint: url }), refusedWith: 400 },
  ];

  describe.each(ROWS)('$row $field', ({ row, field, body, refusedWith, write }) => {
    it.each(NOT_WEB)('refuses %s, naming the field, writing nothing', async (url) => {
      writes.length = 0;
      const res = await send(row, body(url));
      expect([res.status, res.body.message]).toEqual([
        refusedWith,
        expect.stringContaining(`${field}: must be an http:// or https:// URL`),
      ]);
      expect(writes).toEqual([]);
    });

    if (write)
      it.each(WEB)('takes "%s"', async (url) => {
        writes.length = 0;
        const res = await send(row, body(url));
        expect([res.status, writes]).toEqual([expect.any(Number), [write(url)]]);
        expect(res.status).toBeLessThan(300);
      });
  });
});
