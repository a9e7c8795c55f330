import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen, type Answer } from '../../../test/render';
import { OWNER, signedIn } from '../../../test/signed-in';
import { acme, MEMBER_HOLDS, OWNER_HOLDS } from '../orgs/fixtures';
import { HubScreen } from './hub';
import { HubsScreen } from './hubs';

const HUB = {
  uid: '6f1c1f2e-1111-4c4c-8888-000000000001',
  name: 'hub1',
  displayName: 'Hub one',
  provider: 'kind',
  kubernetesVersion: 'v1.31',
  nodeCount: 3,
  status: { phase: 'Ready' },
  managerEndpoint: '',
  createdAt: '2026-01-02T03:04:05Z',
  hubUID: '',
  features: [{ name: 'opscenter', version: '1.2.0' }],
  connectedUsers: [],
};
const SPOKE = {
  name: 'edge1',
  uid: 'u-edge1',
  displayName: 'Edge one',
  clusterNode: 2,
  provider: 'kind',
  kubernetesVersion: 'v1.30',
  clusterSet: 'prod',
};
const FREE = { ...SPOKE, name: 'edge2', uid: 'u-edge2', displayName: '', clusterSet: '' };
const FEATURE_SET = {
  name: 'observability',
  title: 'Observability',
  description: 'Metrics and logs',
  recommended: true,
  installed: true,
  requiredFeatures: [],
  features: [{ name: 'metrics', title: 'Metrics', description: '', recommended: true, installed: true, featureBlock: '', requires: [] }],
};

/** An organization `acme` with one hub, `hub1`: a set `prod` holding `edge1`, `edge2` in no set, a namespace bound. */
function hubAnswers(holds: string[], user: object = OWNER): Record<string, Answer> {
  const set = '/clusters/acme/hub1/clustersets/prod';
  return {
    ...acme(holds, user),
    'GET /orgs/acme/clusters': [200, [HUB]],
    'GET /clusters/acme/hub1/available-clusters': [200, [SPOKE, FREE]],
    'GET /clusters/acme/hub1/clustersets': [200, [{ clusterSetName: 'prod', clusterSetTitle: 'Production', clusters: 1 }]],
    [`GET ${set}/clusters`]: [
      200,
      [{ name: 'edge1', displayName: 'Edge one', clusterNode: 2, provider: 'kind', kubernetesVersion: 'v1.30', imported: true }],
    ],
    [`GET ${set}/clusterlist`]: [200, ['edge2']],
    [`GET ${set}/featuresets`]: [200, [FEATURE_SET]],
    [`GET ${set}/sync-status/all-features`]: [200, { observability: { metrics: { insyncClusters: ['edge1'], unalignedClusters: [] } } }],
    [`GET ${set}/sync-status/opscenter-features-version`]: [
      200,
      { clusterSetVersion: '1.2.0', clusters: [{ name: 'edge1', version: '1.2.0' }] },
    ],
    [`GET ${set}/auto-update/check`]: [200, { possible: true }],
    'GET /clusters/acme/hub1/bound-namespaces': [200, { apps: ['prod'] }],
  };
}

const hubsAt = { path: '/orgs/acme/clusters', pattern: '/orgs/:org/clusters' };
const hubAt = { path: '/orgs/acme/clusters/hub1', pattern: '/orgs/:org/clusters/:cluster' };
const rowsOf = (table: HTMLElement) =>
  within(table)
    .getAllByRole('row')
    .slice(1)
    .map((r) =>
      within(r)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    );

describe('the hub clusters of an organization', () => {
  it('lists each hub as the API answers it, then its managed clusters with their sync status', async () => {
    renderScreen(signedIn(<HubsScreen org="acme" />), { ...hubsAt, answers: hubAnswers(MEMBER_HOLDS) });
    const hubs = await screen.findByRole('table', { name: 'Hub clusters of acme' });
    expect(rowsOf(hubs)).toEqual([
      ['hub1', 'Hub one', 'kind', 'v1.31', '3', 'Ready', 'opscenter 1.2.0', new Date(HUB.createdAt).toLocaleString()],
    ]);
    const spokes = await screen.findByRole('table', { name: 'Managed clusters of hub1' });
    expect(rowsOf(spokes)).toEqual([
      ['edge1', 'Edge one', 'kind', 'v1.30', '2', 'prod', '1.2.0', 'In sync'],
      ['edge2', '—', 'kind', 'v1.30', '2', 'none', '—', 'Not in a cluster set'],
    ]);
  });

  it('says when no hub is enrolled', async () => {
    renderScreen(signedIn(<HubsScreen org="acme" />), {
      ...hubsAt,
      answers: { ...hubAnswers(MEMBER_HOLDS), 'GET /orgs/acme/clusters': [200, []] },
    });
    expect((await screen.findByText(/^Hub clusters of acme:/)).textContent).toBe(
      'Hub clusters of acme: No hub cluster is enrolled in this organization yet.',
    );
  });

  it('shows the API\'s refusal on the "no access" page', async () => {
    renderScreen(signedIn(<HubsScreen org="acme" />), {
      ...hubsAt,
      answers: { ...hubAnswers([]), 'GET /orgs/acme/clusters': [403, { message: 'you are not a member of organization acme' }] },
    });
    // The "no access" page, with the API's words.
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText('The platform answered: “you are not a member of organization acme”.')).toBeTruthy();
  });
});

describe("a hub's page", () => {
  it('offers an owner every change; adding a cluster to a set refreshes the set and the managed clusters', async () => {
    let inSet = ['edge1'];
    const answers = hubAnswers(OWNER_HOLDS);
    const api = renderScreen(signedIn(<HubScreen org="acme" />), {
      ...hubAt,
      answers: {
        ...answers,
        'GET /clusters/acme/hub1/clustersets/prod/clusters': () => [
          200,
          inSet.map((name) => ({ name, displayName: '', clusterNode: 1, provider: 'kind', kubernetesVersion: 'v1.30', imported: true })),
        ],
        'GET /clusters/acme/hub1/clustersets/prod/clusterlist': () => [200, inSet.includes('edge2') ? [] : ['edge2']],
        'POST /clusters/acme/hub1/clustersets/add': () => ((inSet = ['edge1', 'edge2']), [200, { message: 'added' }]),
      },
    });
    await screen.findByRole('form', { name: 'Create cluster set' });
    expect(screen.getByRole('button', { name: 'Delete prod' })).toBeTruthy();
    expect(screen.getByRole('form', { name: 'Install observability' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Disable observability' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Auto-update prod' })).toBeTruthy();
    expect(screen.getByRole('form', { name: 'Bind a namespace' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Unbind apps from prod' })).toBeTruthy();
    const managedBefore = api.calls.filter((c) => c.call === 'GET /clusters/acme/hub1/available-clusters').length;

    fireEvent.click(await screen.findByRole('button', { name: 'Add edge2 to prod' }));
    expect((await screen.findByRole('status')).textContent).toBe('Added edge2 to prod.');
    const members = await screen.findByRole('table', { name: 'Clusters in prod' });
    await within(members).findByText('edge2');
    expect(screen.queryByRole('button', { name: 'Add edge2 to prod' })).toBeNull();
    expect(api.calls.filter((c) => c.call === 'GET /clusters/acme/hub1/available-clusters').length).toBeGreaterThan(managedBefore);
  });

  it('shows the fields the API refused on a new cluster set, under the form', async () => {
    const answers: Record<string, Answer> = {
      ...hubAnswers(OWNER_HOLDS),
      'POST /clusters/acme/hub1/clustersets/create': [
        422,
        { message: 'invalid request', errors: [{ field: 'clusterSet', description: 'a cluster set named staging exists already' }] },
      ],
    };
    renderScreen(signedIn(<HubScreen org="acme" />), { ...hubAt, answers });
    const form = await screen.findByRole('form', { name: 'Create cluster set' });
    fireEvent.change(within(form).getByRole('textbox', { name: /Cluster set name/ }), { target: { value: 'staging' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create cluster set' }));
    const alert = await within(form).findByRole('alert');
    expect(alert.textContent).toContain('invalid request (422)');
    expect(within(alert).getByRole('listitem').textContent).toBe('clusterSet: a cluster set named staging exists already');
  });

  it('offers a member who may not manage the hub what it shows, and no change', async () => {
    renderScreen(signedIn(<HubScreen org="acme" />), { ...hubAt, answers: hubAnswers(MEMBER_HOLDS) });
    await screen.findByRole('table', { name: 'Clusters in prod' });
    await screen.findByRole('table', { name: 'Namespaces of hub1 bound to cluster sets' });
    await screen.findByText('Observability');
    expect(screen.getByRole('link', { name: 'Manage prod' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Delete prod' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Create cluster set' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Add edge2/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Remove edge1/ })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Install observability' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Disable/ })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Auto-update prod' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Bind a namespace' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Unbind/ })).toBeNull();
  });

  it('offers a site admin the changes without ownership', async () => {
    renderScreen(signedIn(<HubScreen org="acme" />), { ...hubAt, answers: hubAnswers(MEMBER_HOLDS, { ...OWNER, is_admin: true }) });
    expect(await screen.findByRole('form', { name: 'Create cluster set' })).toBeTruthy();
  });
});
