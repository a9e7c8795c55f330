import { authzV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer, type RunningGrpcServer } from '@platform/service-kit';
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
  const servers: RunningGrpcServer[] = [];
  /** Every write a backend was asked for, as `rpc url`. */
  const writes: string[] = [];

  beforeAll(async () => {
    const log = createLogger('stub', 'silent');
    const orgsTeams = await startGrpcServer({
      name: 'orgs-teams',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(orgsTeamsV1.OrgsTeamsServiceService, {
          authenticate: async () => ({ user: ROOT, tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: ['all'] }),
          getUser: async () => ROOT,
          editUser: async (req: orgsTeamsV1.EditUserRequest) => {
            writes.push(`editUser ${req.website}`);
            return ROOT;
          },
          editUserSettings: async (req: orgsTeamsV1.EditUserSettingsRequest) => {
            writes.push(`editUserSettings ${req.website}`);
            return ROOT;
          },
        } as never),
        bindService(orgsTeamsOrgsV1.OrganizationsServiceService, {
          getOrg: async () => ORG,
          createOrg: async (req: orgsTeamsOrgsV1.CreateOrgRequest) => {
            writes.push(`createOrg ${req.website}`);
            return ORG;
          },
          editOrg: async (req: orgsTeamsOrgsV1.EditOrgRequest) => {
            // A PATCH sends only what it changes.
            writes.push(`editOrg ${req.website ?? req.managerEndpoint}`);
            return ORG;
          },
        } as never),
      ],
      protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto', 'platformadmin/orgsteams/v1/orgs.proto'],
      log,
    });
    const authz = await startGrpcServer({
      name: 'authz',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(authzV1.AuthzServiceService, {
          checkPermission: async () => ({ allowed: true, dependsOn: [] }),
          check: async () => ({ allowed: true, dependsOn: [] }),
        } as never),
      ],
      protoFiles: ['platformadmin/authz/v1/authz.proto'],
      log,
    });
    servers.push(orgsTeams, authz);
    ({ base, close } = await startTestGateway({
      ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${orgsTeams.port}`,
      AUTHZ_GRPC_ADDR: `127.0.0.1:${authz.port}`,
      PLATFORM_ADMIN_ORG: 'none',
    }));
  });
  afterAll(async () => {
    close?.();
    for (const s of servers) await s.shutdown(100);
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
