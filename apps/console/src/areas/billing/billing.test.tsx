import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen, type Answer } from '../../../test/render';
import BillingArea from './index';

const ANN = { username: 'ann', userType: 'user', email: 'ann@example.com', userID: 5, lastReceivedAt: 1_767_225_600 };
const QUIET = { username: 'quiet', userType: 'user', email: 'quiet@example.com', userID: 6, lastReceivedAt: 0 };

function answers(more: Record<string, Answer> = {}): Record<string, Answer> {
  return {
    'GET /orgs': [200, [{ id: 10, name: 'demo', username: 'demo', full_name: '', visibility: 'public' }]],
    'GET /dashboard/users/': [200, [ANN]],
    'GET /dashboard/users/inactive': [200, [QUIET]],
    ...more,
  };
}

const licensedAt = { path: '/admin/billing/licensed', pattern: '/admin/billing/*' };

describe('the licensed users of the billing dashboard', () => {
  it('lists the accounts the API answers, in the demo organization’s context, and switches to the inactive ones', async () => {
    const api = renderScreen(<BillingArea />, { ...licensedAt, answers: answers() });
    const table = await screen.findByRole('table', { name: 'Every account that reported a licensed product' });
    const [row] = within(table).getAllByRole('row').slice(1);
    expect(within(row!).getByRole('link', { name: 'ann' })).toBeTruthy();
    expect(within(row!).getAllByRole('cell')[2]!.textContent).toBe('ann@example.com');
    expect(api.calls.map((c) => c.call)).toContain('GET /dashboard/users/?org=demo');

    fireEvent.change(screen.getByRole('combobox', { name: 'Show' }), { target: { value: 'inactive' } });
    const inactive = await screen.findByRole('table', { name: 'User accounts that never reported one' });
    expect(within(inactive).getAllByRole('row')[1]!.textContent).toContain('quiet@example.com');
  });

  it('says when no account reported', async () => {
    renderScreen(<BillingArea />, { ...licensedAt, answers: answers({ 'GET /dashboard/users/': [200, []] }) });
    expect((await screen.findByText(/^Every account that reported a licensed product:/)).textContent).toBe(
      'Every account that reported a licensed product: None yet.',
    );
  });

  it('shows the API\'s refusal on the "no access" page', async () => {
    renderScreen(<BillingArea />, {
      ...licensedAt,
      answers: answers({ 'GET /dashboard/users/': [403, { message: 'you may not view licensed users' }] }),
    });
    // The "no access" page, with the API's words.
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText('The platform answered: “you may not view licensed users”.')).toBeTruthy();
  });

  it('says so when there is no organization to give the reports a context', async () => {
    renderScreen(<BillingArea />, { ...licensedAt, answers: answers({ 'GET /orgs': [200, []] }) });
    expect((await screen.findByText(/no organization yet/)).textContent).toBe(
      'There is no organization yet: every billing report asks for one as its context.',
    );
  });
});
