import { fireEvent, screen, within } from '@testing-library/react';
import { acme, MEMBER_HOLDS, OWNER_HOLDS } from '../orgs/fixtures';
import { renderScreen, type Answer } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import type { DailySeries } from './usage-views';
import { OrgUsage } from './index';

// Chart.js draws on a canvas jsdom does not have: the chart shows its name and its series' numbers instead.
jest.mock('./usage-chart', () => ({
  UsageChart: ({ label, labels, series }: { label: string; labels: string[]; series: DailySeries[] }) => (
    <figure role="img" aria-label={label}>
      {labels.join(',')}|{series.map((s) => `${s.name}:${s.values.join(',')}`).join(';')}
    </figure>
  ),
}));

const quantities = (cpu: number) => ({ cpuCoreHours: cpu, memoryGiBHours: cpu * 2, storageGiBHours: cpu * 3, objectHours: cpu * 4 });
const HUB = '0f0e0d0c-0000-4000-8000-000000000001';
const REPORT = {
  rows: [
    {
      clusterUID: HUB,
      clusterName: 'hub-1',
      namespace: 'databases',
      namespaceUID: 'ns-1',
      objects: 2,
      products: ['productdb'],
      ...quantities(30),
      months: [
        { month: '2026-09', ...quantities(10) },
        { month: '2026-10', ...quantities(20) },
      ],
    },
    {
      clusterUID: HUB,
      clusterName: 'hub-1',
      namespace: 'backups',
      namespaceUID: 'ns-2',
      objects: 1,
      products: ['productbackup'],
      ...quantities(5),
      months: [{ month: '2026-10', ...quantities(5) }],
    },
  ],
  totals: { rows: 2, ...quantities(35) },
};
const NAMESPACE = {
  clusterUID: HUB,
  namespace: 'databases',
  rows: [
    {
      clusterUID: HUB,
      clusterName: 'hub-1',
      namespace: 'databases',
      namespaceUID: 'ns-1',
      group: 'db.example',
      kind: 'Database',
      name: 'orders',
      objectID: 'obj-1',
      version: '16.2',
      topology: 'CLUSTER',
      replicas: 3,
      firstSampleAt: '2026-09-01T00:00:00Z',
      lastSampleAt: '2026-10-31T00:00:00Z',
      product: 'productdb',
      ...quantities(30),
      months: REPORT.rows[0].months,
    },
  ],
  totals: { rows: 1, ...quantities(30) },
};

const usage = (holds: string[], more: Record<string, Answer> = {}) => ({
  ...acme(holds),
  'GET /dbaas/billing/reports/namespaces': [200, REPORT] as Answer,
  [`GET /dbaas/billing/reports/clusters/${HUB}/namespaces/databases`]: [200, NAMESPACE] as Answer,
  ...more,
});
const at = (path = '/orgs/acme/usage') => ({ path, pattern: '/orgs/:org/usage/*' });
const rowsOf = (table: HTMLElement) =>
  within(table)
    .getAllByRole('row')
    .slice(1)
    .map((r) => within(r).getAllByRole('cell').map((c) => c.textContent));

describe("an organization's usage, for its owners", () => {
  it('charts each namespace per month, with the same numbers as a table, and lists the namespaces', async () => {
    const api = renderScreen(signedIn(<OrgUsage />), { ...at(), answers: usage(OWNER_HOLDS) });
    const chart = await screen.findByRole('img', { name: 'Usage of acme by namespace, per month' });
    expect(chart.textContent).toBe('September 2026,October 2026|hub-1/databases:10,20;hub-1/backups:0,5');
    expect(rowsOf(screen.getByRole('table', { name: 'Monthly CPU core-hours of acme by namespace' }))).toEqual([
      ['September 2026', '10', '0', '10'],
      ['October 2026', '20', '5', '25'],
    ]);
    const namespaces = screen.getByRole('table', { name: 'Namespaces of acme, all months' });
    expect(rowsOf(namespaces)[0]).toEqual(['hub-1', 'databases', 'productdb', '2', '30', '60', '90', '120']);
    expect(api.calls.map((c) => c.call)).toContain('GET /dbaas/billing/reports/namespaces?org=acme');

    // Another quantity, and one month's numbers.
    fireEvent.change(screen.getByRole('combobox', { name: 'Quantity' }), { target: { value: 'memoryGiBHours' } });
    await screen.findByRole('table', { name: 'Monthly Memory GiB-hours of acme by namespace' });
    fireEvent.change(screen.getByRole('combobox', { name: 'Month' }), { target: { value: '2026-09' } });
    const september = await screen.findByRole('table', { name: 'Namespaces of acme, September 2026' });
    expect(rowsOf(september)).toEqual([['hub-1', 'databases', 'productdb', '2', '10', '20', '30', '40']]);
  });

  it("opens a namespace's objects, charted per month", async () => {
    renderScreen(signedIn(<OrgUsage />), { ...at(), answers: usage(OWNER_HOLDS) });
    fireEvent.click(await screen.findByRole('link', { name: 'databases' }));
    await screen.findByRole('img', { name: 'Usage of databases by object, per month' });
    const objects = await screen.findByRole('table', { name: 'Objects of databases, all months' });
    expect(rowsOf(objects)).toEqual([['productdb', 'Database', 'orders', '16.2', 'CLUSTER', '3', '30', '60', '90', '120']]);
    expect(screen.getByRole('heading', { name: 'Namespace databases on hub-1' })).toBeTruthy();
    fireEvent.click(screen.getByRole('link', { name: 'Every namespace of acme' }));
    await screen.findByRole('table', { name: 'Namespaces of acme, all months' });
  });

  it('says so where billing is off, and when nothing was reported', async () => {
    renderScreen(signedIn(<OrgUsage />), { ...at(), answers: usage(OWNER_HOLDS, { 'GET /dbaas/billing/reports/namespaces': [404, { message: 'not found' }] }) });
    expect(await screen.findByText(/Usage reports are not available on this deployment/)).toBeTruthy();
  });

  it('says when the clusters reported nothing yet', async () => {
    renderScreen(signedIn(<OrgUsage />), {
      ...at(),
      answers: usage(OWNER_HOLDS, { 'GET /dbaas/billing/reports/namespaces': [200, { rows: [], totals: { rows: 0, ...quantities(0) } }] }),
    });
    expect(await screen.findByText('No usage reported by the clusters of acme yet.')).toBeTruthy();
  });

  it('shows a plain member who opens an owner’s URL the "no access" page alone, not a usage screen drawn in part', async () => {
    renderScreen(signedIn(<OrgUsage />), {
      ...at(),
      answers: usage(MEMBER_HOLDS, { 'GET /dbaas/billing/reports/namespaces': [403, { message: 'org ownership required' }] }),
    });
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText('This screen is for the owners of acme and site admins. If you need it, ask an owner of acme.')).toBeTruthy();
    expect(within(page).getByRole('link', { name: 'Your organizations' }).getAttribute('href')).toBe('/orgs');
    // Nothing of the usage screen: no tabs, no choices, no raw refusal.
    expect(screen.queryByRole('navigation', { name: 'Organization acme' })).toBeNull();
    expect(screen.queryByRole('group', { name: 'Usage shown' })).toBeNull();
    expect(screen.queryByText(/org ownership required \(403\)/)).toBeNull();
  });

  it('shows the "no access" page with the API’s words when the API refuses one the tabs let in', async () => {
    renderScreen(signedIn(<OrgUsage />), {
      ...at(),
      answers: usage(OWNER_HOLDS, { 'GET /dbaas/billing/reports/namespaces': [403, { message: 'org ownership required' }] }),
    });
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText('The platform answered: “org ownership required”.')).toBeTruthy();
    expect(screen.queryByRole('group', { name: 'Usage shown' })).toBeNull();
  });
});
