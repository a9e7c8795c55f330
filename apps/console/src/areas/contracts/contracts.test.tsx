import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen, type Answer } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import { acme, MEMBER_HOLDS, OWNER_HOLDS } from '../orgs/fixtures';
import { OrgContracts } from './org-contracts';

const UUID = '0b8f1d5e-2c3a-4d4e-9f00-000000000001';
const FREE_UUID = '0b8f1d5e-2c3a-4d4e-9f00-000000000002';
const BOUND = {
  id: 31,
  contractId: 3,
  cluster: UUID,
  displayName: 'edge1',
  clusterStatus: { name: 'edge1', isImported: true, tags: ['prod'] },
  duplicateContractFeatures: [],
  error: '',
};
const CONTRACT = {
  id: 3,
  uid: 10,
  orgOrUser: 'acme',
  name: 'Acme DB',
  product: 'productdb',
  features: ['backup'],
  clusters: [BOUND],
  quota: { enabled: false, limit: 0, metric: 'cpu_core_month', alertThresholds: [] },
  start: 1_700_000_000,
  end: 4_100_000_000,
  documentPath: '',
  allowOffline: false,
  autoAssignCluster: false,
  disableAnalytics: false,
  enableClientBilling: false,
  revoked: false,
  restrictions: '',
  emails: { licenseUsers: [], usageAlertClient: [] },
};

/** `acme` with one contract binding `edge1`, and `edge2` in its inventory; `holds` on the organization. */
function contractAnswers(holds: string[]): Record<string, Answer> {
  return {
    ...acme([...holds, 'view_contracts_mgmt']),
    'GET /user/contracts': [200, [CONTRACT]],
    'GET /user/contracts/3': [200, CONTRACT],
    'GET /user/contracts/3/audit': [200, [{ id: 1, contractID: 3, addedBy: 'root', event: `bound ${UUID}`, createdUnix: 1_700_000_100 }]],
    'GET /user/contracts/3/clusters/imported/non-associated': [
      200,
      [
        {
          id: '2',
          uid: FREE_UUID,
          name: 'edge2',
          displayName: '',
          provider: 'kind',
          kubernetesVersion: 'v1.30',
          nodeCount: 1,
          status: {},
          hubUID: '',
        },
      ],
    ],
    'GET /orgs/acme/clusters': [200, []],
    'GET /user/contracts/active/associated-clusters': [200, []],
  };
}

const listAt = { path: '/orgs/acme/contracts', pattern: '/orgs/:org/contracts/*' };
const contractAt = { path: '/orgs/acme/contracts/3', pattern: '/orgs/:org/contracts/*' };
const ADMIN_OF_CONTRACTS = [...OWNER_HOLDS, 'add_cluster_contract', 'issue_license'];

describe("an organization's contracts", () => {
  it('lists each contract the API answers with its clusters and quota', async () => {
    renderScreen(signedIn(<OrgContracts />), { ...listAt, answers: contractAnswers(MEMBER_HOLDS) });
    const table = await screen.findByRole('table', { name: 'Contracts of acme' });
    const [row] = within(table).getAllByRole('row').slice(1);
    const cells = within(row!)
      .getAllByRole('cell')
      .map((c) => c.textContent);
    expect(cells[0]).toBe('Acme DB (productdb)');
    expect(cells.slice(3)).toEqual(['Active', '1', 'none']);
  });

  it('names quota metrics in the words the usage reports use, whichever spelling the contract was made with', async () => {
    const quota = (metric: string, limit: number) => ({ ...CONTRACT, quota: { enabled: true, limit, metric, alertThresholds: [80] } });
    renderScreen(signedIn(<OrgContracts />), {
      ...listAt,
      answers: {
        ...contractAnswers(MEMBER_HOLDS),
        'GET /user/contracts': [200, [quota('cpu_core_month', 12), { ...quota('object-hours', 500), id: 4 }]],
      },
    });
    const table = await screen.findByRole('table', { name: 'Contracts of acme' });
    expect(
      within(table)
        .getAllByRole('row')
        .slice(1)
        .map((r) => within(r).getAllByRole('cell').at(-1)?.textContent),
    ).toEqual(['12 CPU core-months', '500 Object-hours']);
  });

  it('says when there is no contract', async () => {
    renderScreen(signedIn(<OrgContracts />), {
      ...listAt,
      answers: { ...contractAnswers(MEMBER_HOLDS), 'GET /user/contracts': [200, []] },
    });
    expect((await screen.findByText(/^Contracts of acme:/)).textContent).toBe('Contracts of acme: No contract yet.');
  });

  it('shows the API\'s refusal on the "no access" page', async () => {
    renderScreen(signedIn(<OrgContracts />), {
      ...listAt,
      answers: { ...contractAnswers(MEMBER_HOLDS), 'GET /user/contracts': [403, { message: 'org membership required' }] },
    });
    // The "no access" page, with the API's words.
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText('The platform answered: “org membership required”.')).toBeTruthy();
  });

  it('offers binding a cluster to several contracts only to whoever may assign clusters', async () => {
    renderScreen(signedIn(<OrgContracts />), { ...listAt, answers: contractAnswers(ADMIN_OF_CONTRACTS) });
    expect(await screen.findByRole('form', { name: 'Bind a cluster to several contracts' })).toBeTruthy();
  });

  it('offers a plain member no binding', async () => {
    renderScreen(signedIn(<OrgContracts />), { ...listAt, answers: contractAnswers(MEMBER_HOLDS) });
    await screen.findByRole('table', { name: 'Contracts of acme' });
    // The answer about the caller's relations arrives after the list: the organization's Contracts tab, which needs
    // it, is drawn once it is in.
    await screen.findByRole('link', { name: 'Contracts' });
    expect(screen.queryByRole('form', { name: 'Bind a cluster to several contracts' })).toBeNull();
  });
});

describe("a contract's page", () => {
  it('offers whoever may, issuing, unbinding and binding; binding refreshes the bound clusters', async () => {
    let bound = [BOUND];
    const api = renderScreen(signedIn(<OrgContracts />), {
      ...contractAt,
      answers: {
        ...contractAnswers(ADMIN_OF_CONTRACTS),
        'GET /user/contracts/3': () => [200, { ...CONTRACT, clusters: bound }],
        'POST /user/contracts/3/clusters': () => (
          (bound = [
            ...bound,
            { ...BOUND, id: 32, cluster: FREE_UUID, displayName: 'edge2', clusterStatus: { name: 'edge2', isImported: true, tags: [] } },
          ]),
          [201, []]
        ),
      },
    });
    expect(await screen.findByRole('button', { name: 'Issue license for edge1' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Unbind edge1' })).toBeTruthy();
    const form = await screen.findByRole('form', { name: 'Bind a cluster' });
    await within(form).findByRole('option', { name: `edge2 (${FREE_UUID})` });
    fireEvent.change(within(form).getByRole('combobox', { name: 'Inventory cluster' }), { target: { value: FREE_UUID } });
    fireEvent.click(within(form).getByRole('button', { name: 'Bind cluster' }));
    expect((await within(form).findByRole('status')).textContent).toBe('Bound edge2');
    expect(await screen.findByRole('button', { name: 'Unbind edge2' })).toBeTruthy();
    expect(api.calls).toContainEqual({ call: 'POST /user/contracts/3/clusters?org=acme', body: [{ cluster: FREE_UUID }] });
  });

  it("shows the API's field errors on binding (422), under the form", async () => {
    renderScreen(signedIn(<OrgContracts />), {
      ...contractAt,
      answers: {
        ...contractAnswers(ADMIN_OF_CONTRACTS),
        'POST /user/contracts/3/clusters': [
          422,
          { message: 'invalid request', errors: [{ field: 'displayName', description: 'too long' }] },
        ],
      },
    });
    const form = await screen.findByRole('form', { name: 'Bind a cluster' });
    fireEvent.change(within(form).getByRole('textbox', { name: /Cluster UUID/ }), { target: { value: FREE_UUID } });
    fireEvent.click(within(form).getByRole('button', { name: 'Bind cluster' }));
    const alert = await within(form).findByRole('alert');
    expect(alert.textContent).toContain('invalid request (422)');
    expect(within(alert).getByRole('listitem').textContent).toBe('displayName: too long');
  });

  it('shows the quota used as the platform measured it, agreeing with its audit trail though no license was ever issued', async () => {
    const overQuota = {
      ...CONTRACT,
      quota: { enabled: true, limit: 1, metric: 'object-hours', alertThresholds: [50, 80, 100], disableLicenseOnLimitReached: true },
    };
    let used = 2100;
    const api = renderScreen(signedIn(<OrgContracts />), {
      ...contractAt,
      answers: {
        ...contractAnswers(ADMIN_OF_CONTRACTS),
        'GET /user/contracts/3': [200, overQuota],
        'GET /user/contracts/3/audit': [
          200,
          [
            { id: 1, contractID: 3, addedBy: 'root', event: `cluster-bound: ${UUID}`, createdUnix: 1_700_000_100 },
            {
              id: 2,
              contractID: 3,
              addedBy: 'notifications',
              event: 'quota-notice: 100% of 1 object-hours (used 2100.00), to 1 recipient(s)',
              createdUnix: 1_700_000_200,
            },
          ],
        ],
        'GET /user/contracts/3/quota-usage': () => [
          200,
          { enabled: true, metric: 'object-hours', limit: 1, used, measuredUnix: 1_700_000_300 },
        ],
        'POST /user/contracts/3/clusters/31/issue-license': () => (
          (used = 2101.5),
          [403, { message: 'contract 3 has used its quota: 2101.50 of 1 object-hours; licenses are disabled until it is raised' }]
        ),
      },
    });
    const gauge = await screen.findByRole('meter', { name: 'Quota used (Object-hours)' });
    expect(gauge.getAttribute('value')).toBe('2100');
    expect(screen.getByText('2,100 / 1 Object-hours (210000%)')).toBeTruthy();
    expect(screen.getByText(/^The quota is used up\. Measured at /)).toBeTruthy();
    expect(screen.queryByText(/Not measured yet/)).toBeNull();
    expect(api.calls.map((c) => c.call)).toContain('GET /user/contracts/3/quota-usage?org=acme');

    // A refused license: the usage is measured again, and says what the refusal says.
    fireEvent.click(screen.getByRole('button', { name: 'Issue license for edge1' }));
    await screen.findByText(/has used its quota: 2101\.50 of 1 object-hours/);
    expect(await screen.findByText('2,101.5 / 1 Object-hours (210150%)')).toBeTruthy();
  });

  it('says without a quota that licenses are not limited, and asks for no usage', async () => {
    const api = renderScreen(signedIn(<OrgContracts />), { ...contractAt, answers: contractAnswers(MEMBER_HOLDS) });
    expect(await screen.findByText('No quota: licenses are not limited by usage.')).toBeTruthy();
    expect(api.calls.map((c) => c.call)).not.toContain('GET /user/contracts/3/quota-usage?org=acme');
  });

  it('offers a plain member the contract without issuing, unbinding or binding', async () => {
    const api = renderScreen(signedIn(<OrgContracts />), { ...contractAt, answers: contractAnswers(MEMBER_HOLDS) });
    await screen.findByRole('table', { name: 'Clusters bound to contract 3' });
    await screen.findByRole('table', { name: 'Audit trail of contract 3' });
    // Once the caller's relations are in (the Contracts tab needs them).
    await screen.findByRole('link', { name: 'Contracts' });
    expect(screen.queryByRole('button', { name: /^Issue license/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Unbind/ })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Bind a cluster' })).toBeNull();
    expect(api.calls.map((c) => c.call)).not.toContain('GET /user/contracts/3/clusters/imported/non-associated?org=acme');
  });
});
