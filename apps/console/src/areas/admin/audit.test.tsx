import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen, type StubbedApi } from '../../../test/render';
import type { AuditEvent } from './admin-users-api';
import Audit from './audit';

const event: AuditEvent = {
  id: '0b6c7f2e-5f4a-4d8e-9d0e-1a2b3c4d5e6f',
  time: '2026-03-04T05:06:07Z',
  actor: { id: 1, login: 'root' },
  action: 'adminEditUser',
  method: 'PATCH',
  route: '/admin/users/{username}',
  target: '/admin/users/bob',
  org: '',
  status: 200,
  request_id: 'req-42',
  client: '203.0.113.9',
};

const queries = (api: StubbedApi) => api.calls.map((c) => Object.fromEntries(new URL(c.call.slice(4), 'http://x').searchParams));

describe('the audit events screen', () => {
  it('shows who did what, on what, when, with the details', async () => {
    renderScreen(<Audit />, { path: '/admin/audit', answers: { 'GET /admin/audit-events': [200, [event], { 'X-Total-Count': '1' }] } });
    const table = await screen.findByRole('table', { name: 'Audit events (1)' });
    const [row] = within(table).getAllByRole('row').slice(1);
    const cells = within(row).getAllByRole('cell').map((c) => c.textContent);
    expect(cells.slice(1, 5)).toEqual(['root', 'adminEditUserPATCH /admin/users/{username}', '/admin/users/bob', '200']);
    expect(within(row).getByText('req-42')).toBeTruthy();
    expect(within(row).getByText('203.0.113.9')).toBeTruthy();
  });

  it('sends the filters and the time range as the API takes them, and pages within them', async () => {
    const api = renderScreen(<Audit />, {
      path: '/admin/audit',
      answers: { 'GET /admin/audit-events': [200, [event], { 'X-Total-Count': '30' }] },
    });
    await screen.findByRole('table');
    const form = screen.getByRole('form', { name: 'Filter audit events' });
    fireEvent.change(within(form).getByLabelText('Actor'), { target: { value: 'root' } });
    fireEvent.change(within(form).getByLabelText('Action'), { target: { value: 'adminEditUser' } });
    fireEvent.change(within(form).getByLabelText('Target'), { target: { value: 'admin/users' } });
    fireEvent.change(within(form).getByLabelText('From'), { target: { value: '2026-03-01T00:00' } });
    fireEvent.change(within(form).getByLabelText('To'), { target: { value: '2026-03-31T23:59' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Filter' }));
    await screen.findByRole('table', { name: 'Audit events matching the filters (30)' });
    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    await screen.findByText('Page 2 of 2 (30)');
    const filters = {
      actor: 'root',
      action: 'adminEditUser',
      target: '/admin/users',
      since: new Date('2026-03-01T00:00').toISOString(),
      until: new Date('2026-03-31T23:59').toISOString(),
      limit: '20',
    };
    expect(queries(api)).toEqual([{ page: '1', limit: '20' }, { ...filters, page: '1' }, { ...filters, page: '2' }]);
    // The filters in force stay in the form.
    expect((within(screen.getByRole('form', { name: 'Filter audit events' })).getByLabelText('Actor') as HTMLInputElement).value).toBe('root');
  });

  it('refuses a time range that ends before it starts, without asking', async () => {
    const api = renderScreen(<Audit />, { path: '/admin/audit', answers: { 'GET /admin/audit-events': [200, [], { 'X-Total-Count': '0' }] } });
    await screen.findByText('Audit events (0): none yet.');
    const form = screen.getByRole('form', { name: 'Filter audit events' });
    fireEvent.change(within(form).getByLabelText('From'), { target: { value: '2026-03-02T00:00' } });
    fireEvent.change(within(form).getByLabelText('To'), { target: { value: '2026-03-01T00:00' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Filter' }));
    expect(within(form).getByRole('alert').textContent).toBe('From is after To: nothing could match.');
    expect(api.calls).toHaveLength(1);
  });
});
