import { contractsV1, notificationsV1, orgsTeamsOrgsV1, orgsTeamsSettingsV1, orgsTeamsV1 } from '@platform/proto';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Settings and switches never fail open (docs/site-settings.md): a body that gives no value — `{}`, nulls, a
// misspelled key — is 422 with its field errors and reaches no backend, and a switch takes no key but its own; the
// bodies the spec shows still change what they name. The rows run with stand-in backends that record each write.

const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true, email: 'root@example.com' });

describe('settings bodies at the edge', () => {
  let base: string;
  let close: () => void;
  let backends: FakeBackends;
  /** Every write a backend was asked for, as `rpc json`. */
  const writes: string[] = [];
  const record = (rpc: string, req: object) => writes.push(`${rpc} ${JSON.stringify(req)}`);

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: async () => ({ user: ROOT, tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: ['all'] }),
          editUserSettings: async (req) => {
            record('editUserSettings', { hideEmail: req.hideEmail, fullName: req.fullName });
            return ROOT;
          },
          setTwoFactorRequirement: async (req) => {
            record('setTwoFactorRequirement', req);
            return req;
          },
        },
        organizations: {
          getOrg: async ({ name }) => orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: name, visibility: 'public' }),
        },
        siteSettings: {
          setRegistration: async (req) => {
            record('setRegistration', { disableRegistration: req.disableRegistration });
            return { disableRegistration: req.disableRegistration };
          },
          updateBranding: async (req) => {
            record('updateBranding', { appName: req.appName, showAppTag: req.showAppTag });
            return orgsTeamsSettingsV1.Branding.fromPartial({
              appName: req.appName ?? 'Platform',
              showAppTag: !!req.showAppTag,
              etag: '"e"',
            });
          },
        },
      },
      authz: {
        authz: {
          checkPermission: async () => ({ allowed: true, dependsOn: [] }),
          check: async () => ({ allowed: true, dependsOn: [] }),
        },
      },
      contractsLicensing: {
        contracts: {
          getContract: async ({ id }) => contractsV1.Contract.fromPartial({ id, ownerId: ROOT.id }),
          setPreferences: async (req) => {
            record('setPreferences', { autoAssignCluster: req.autoAssignCluster, usageAlertClient: req.usageAlertClient });
            return contractsV1.Contract.fromPartial({ id: req.id, ownerId: ROOT.id });
          },
        },
        notifications: {
          setWebhookEndpointEnabled: async (req) => {
            record('setWebhookEndpointEnabled', { enabled: req.enabled });
            return notificationsV1.WebhookEndpoint.fromPartial({
              id: req.id,
              url: 'https://hooks.example.com/',
              events: ['quota.threshold'],
              enabled: req.enabled,
            });
          },
        },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, DEPLOYMENT_TYPE: 'Hosted', PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const send = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: 'token root', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as { message?: string; errors?: { field: string; description: string }[] } & Record<string, unknown>,
    };
  };

  /** Each settings row: the bodies that give no value (or a foreign key to a switch), and the bodies the spec shows. */
  const ROWS: { row: string; refused: unknown[]; accepted: [unknown, string][] }[] = [
    {
      row: 'POST /disable-registration?org=acme',
      refused: [
        {},
        { disableRegistration: null },
        { disableRegistraton: true },
        { disableregistration: false },
        { disableRegistration: true, enable: true },
      ],
      accepted: [
        [{ disableRegistration: true }, 'setRegistration {"disableRegistration":true}'],
        [{ disableRegistration: false }, 'setRegistration {"disableRegistration":false}'],
      ],
    },
    {
      row: 'POST /branding?org=acme',
      refused: [{}, { appName: null, logo: null, favicon: null, primaryColor: null, showAppTag: null }, { app_name: 'Acme' }],
      accepted: [
        [{ appName: 'Acme' }, 'updateBranding {"appName":"Acme"}'],
        [{ showAppTag: false }, 'updateBranding {"showAppTag":false}'],
        [{ appName: '' }, 'updateBranding {"appName":""}'],
      ],
    },
    {
      row: 'PUT /admin/two-factor',
      refused: [{}, { requirement: null }, { requirment: 'all' }, { requirement: 'all', also: 'admins' }],
      accepted: [[{ requirement: 'off' }, 'setTwoFactorRequirement {"requirement":"off"}']],
    },
    {
      row: 'PATCH /admin/notifications/webhooks/3',
      refused: [{}, { enabled: null }, { enable: true }, { enabled: true, disabled: false }],
      accepted: [[{ enabled: false }, 'setWebhookEndpointEnabled {"enabled":false}']],
    },
    {
      row: 'PATCH /user/settings',
      refused: [{}, { hide_email: null }, { hideEmail: true }],
      accepted: [[{ hide_email: true }, 'editUserSettings {"hideEmail":true}']],
    },
    {
      row: 'PUT /user/contracts/4/preferences',
      refused: [{}, { autoAssignCluster: null, usageAlertClient: null }, { autoAssign: true }],
      accepted: [
        [{ autoAssignCluster: true }, 'setPreferences {"autoAssignCluster":true,"usageAlertClient":[]}'],
        [{ usageAlertClient: 'ops@example.com' }, 'setPreferences {"usageAlertClient":["ops@example.com"]}'],
      ],
    },
  ];

  describe.each(ROWS)('$row', ({ row, refused, accepted }) => {
    const [method, path] = row.split(' ');

    it.each(refused.map((b) => [JSON.stringify(b), b]))('refuses %s with 422 naming the field, writing nothing', async (_name, body) => {
      writes.length = 0;
      const res = await send(method, path, body);
      expect(res.status).toBe(422);
      expect(res.body.errors?.length).toBeGreaterThan(0);
      expect(res.body.errors!.every((e) => e.field.startsWith('body') && e.description)).toBe(true);
      expect(writes).toEqual([]);
    });

    it.each(accepted.map(([b, w]) => [JSON.stringify(b), b, w]))('takes %s as before', async (_name, body, write) => {
      writes.length = 0;
      const res = await send(method, path, body);
      expect(res.status).toBe(200);
      expect(writes).toEqual([write]);
    });
  });

  it('says which value is missing', async () => {
    expect((await send('POST', '/disable-registration?org=acme', {})).body).toMatchObject({
      message: 'body: give a value to at least one of disableRegistration',
      errors: [{ field: 'body', description: 'give a value to at least one of disableRegistration' }],
    });
    expect((await send('POST', '/disable-registration?org=acme', { disableRegistration: true, enable: true })).body.errors).toEqual([
      { field: 'body', description: expect.stringContaining('enable') },
    ]);
  });
});
