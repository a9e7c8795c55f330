import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen, type Answer } from '../../../test/render';
import { OWNER, signedIn } from '../../../test/signed-in';
import { orgRoutes, siteRoutes } from './api';
import { Deliveries, Mails, Webhooks } from './notifications';

const routes = orgRoutes('acme');
const at = { path: '/orgs/acme/notifications', pattern: '/orgs/:org/notifications' };
const HOOK = {
  id: 5,
  url: 'https://hooks.acme.example/platform',
  events: ['quota.threshold'],
  enabled: true,
  disabledReason: '',
  failuresInRow: 0,
  createdBy: 'olivia',
  createdAt: '2026-01-01T00:00:00Z',
};
const answers = (more: Record<string, Answer> = {}): Record<string, Answer> => ({
  'GET /user': [200, OWNER],
  'GET /orgs/acme/notifications/webhooks': [200, [HOOK]],
  ...more,
});
const firstRow = (table: HTMLElement) =>
  within(within(table).getAllByRole('row')[1])
    .getAllByRole('cell')
    .map((c) => c.textContent);

describe("an organization's webhook endpoints", () => {
  it('lists each endpoint with its events and status', async () => {
    renderScreen(signedIn(<Webhooks routes={routes} />), { ...at, answers: answers() });
    const table = await screen.findByRole('table', { name: 'Webhook endpoints of acme (1)' });
    expect(firstRow(table).slice(0, 3)).toEqual(['https://hooks.acme.example/platform', 'Quota threshold reached', 'Enabled']);
  });

  it('says when there are none', async () => {
    renderScreen(signedIn(<Webhooks routes={routes} />), { ...at, answers: answers({ 'GET /orgs/acme/notifications/webhooks': [200, []] }) });
    expect((await screen.findByText(/Webhook endpoints of acme \(0\)/)).textContent).toBe(
      'Webhook endpoints of acme (0): none yet; register one below.',
    );
  });

  it('shows one who is not an owner the "no access" page, with the API\'s words', async () => {
    renderScreen(signedIn(<Webhooks routes={routes} />), {
      ...at,
      answers: answers({ 'GET /orgs/acme/notifications/webhooks': [403, { message: 'org ownership required' }] }),
    });
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText('The platform answered: “org ownership required”.')).toBeTruthy();
    expect(screen.queryByRole('form')).toBeNull();
  });

  it('refuses a URL that is not https before sending, shows the API refusing a private one, and shows a new secret once', async () => {
    let hooks = [HOOK];
    const api = renderScreen(signedIn(<Webhooks routes={routes} />), {
      ...at,
      answers: answers({
        'GET /orgs/acme/notifications/webhooks': () => [200, hooks],
        'POST /orgs/acme/notifications/webhooks': async (req) => {
          const body = (await req.json()) as { url: string; events: string[] };
          if (body.url.includes('internal'))
            return [422, { message: 'invalid request', errors: [{ field: 'url', description: 'internal.acme resolves to a loopback or private address' }] }];
          const made = { ...HOOK, id: 6, url: body.url, events: body.events };
          hooks = [...hooks, made];
          return [201, { ...made, secret: 'whsec_0123456789abcdef' }];
        },
      }),
    });
    const form = await screen.findByRole('form', { name: 'Register webhook endpoint' });
    const url = within(form).getByRole('textbox', { name: /^URL/ });
    const register = within(form).getByRole('button', { name: 'Register endpoint' });

    fireEvent.change(url, { target: { value: 'http://hooks.acme.example/in' } });
    fireEvent.click(register);
    expect((await within(form).findByRole('alert')).textContent).toBe('URL: must start with https://');
    expect(api.calls.filter((c) => c.call.startsWith('POST'))).toHaveLength(0);

    fireEvent.change(url, { target: { value: 'https://internal.acme/in' } });
    fireEvent.click(register);
    expect((await within(form).findByRole('listitem')).textContent).toBe('url: internal.acme resolves to a loopback or private address');

    fireEvent.change(url, { target: { value: 'https://alerts.acme.example/in' } });
    fireEvent.click(within(form).getByRole('checkbox', { name: 'Quota threshold reached' }));
    fireEvent.click(register);
    const secret = await screen.findByRole('region', { name: 'Signing secret of https://alerts.acme.example/in' });
    expect(within(secret).getByRole('textbox', { name: 'Signing secret' })).toHaveProperty('value', 'whsec_0123456789abcdef');
    expect(api.calls.at(-2)).toEqual({
      call: 'POST /orgs/acme/notifications/webhooks',
      body: { url: 'https://alerts.acme.example/in', events: ['contract.expiring'] },
    });
    await screen.findByRole('table', { name: 'Webhook endpoints of acme (2)' });
    fireEvent.click(within(secret).getByRole('button', { name: 'I have copied it' }));
    expect(screen.queryByText('whsec_0123456789abcdef')).toBeNull();
    expect(screen.queryByRole('region', { name: /Signing secret/ })).toBeNull();
  });

  it('disables an endpoint, and deleting one takes it off the list', async () => {
    let hooks = [HOOK];
    const api = renderScreen(signedIn(<Webhooks routes={routes} />), {
      ...at,
      answers: answers({
        'GET /orgs/acme/notifications/webhooks': () => [200, hooks],
        'PATCH /orgs/acme/notifications/webhooks/5': async (req) => {
          const { enabled } = (await req.json()) as { enabled: boolean };
          hooks = [{ ...HOOK, enabled, disabledReason: enabled ? '' : 'disabled by olivia' }];
          return [200, hooks[0]];
        },
        'DELETE /orgs/acme/notifications/webhooks/5': () => ((hooks = []), [204]),
      }),
    });
    fireEvent.click(await screen.findByRole('button', { name: `Disable ${HOOK.url}` }));
    await screen.findByRole('button', { name: `Enable ${HOOK.url}` });
    expect(firstRow(screen.getByRole('table'))[2]).toBe('Disabled: disabled by olivia');
    expect(api.calls.find((c) => c.call.startsWith('PATCH'))?.body).toEqual({ enabled: false });

    fireEvent.click(screen.getByRole('button', { name: `Delete ${HOOK.url}` }));
    fireEvent.click(screen.getByRole('button', { name: `Confirm delete ${HOOK.url}` }));
    expect((await screen.findByText(/Webhook endpoints of acme \(0\)/)).textContent).toContain('none yet');
  });
});

describe('the delivery log and the mails', () => {
  it("shows each delivery's status, attempts, response code and error", async () => {
    renderScreen(signedIn(<Deliveries routes={routes} />), {
      ...at,
      answers: answers({
        'GET /orgs/acme/notifications/deliveries': [
          200,
          [
            {
              id: 9,
              channel: 'webhook',
              recipient: '',
              endpointId: 5,
              url: HOOK.url,
              event: 'quota.threshold',
              status: 'failed',
              attempts: 8,
              responseCode: 500,
              lastError: 'answered 500',
              contractId: 4,
              createdAt: '2026-01-01T00:00:00Z',
              updatedAt: '2026-01-01T01:00:00Z',
              nextAttemptAt: '2026-01-01T02:00:00Z',
            },
            // A mail of the same notice, with the same id in its own channel.
            {
              id: 9,
              channel: 'mail',
              recipient: 'ops@acme.example',
              endpointId: 0,
              url: '',
              event: 'quota.threshold',
              status: 'pending',
              attempts: 1,
              responseCode: 0,
              lastError: 'connect ECONNREFUSED',
              contractId: 4,
              createdAt: '2026-01-01T00:00:00Z',
              updatedAt: '2026-01-01T00:00:00Z',
              nextAttemptAt: '2026-01-01T00:01:00Z',
            },
          ],
        ],
      }),
    });
    const table = await screen.findByRole('table', { name: 'Deliveries (webhooks and mails), newest first (2)' });
    const [webhook, mail] = within(table)
      .getAllByRole('row')
      .slice(1)
      .map((row) => within(row).getAllByRole('cell').map((cell) => cell.textContent));
    expect(webhook.slice(1)).toEqual(['Quota threshold reached', '4', 'Webhook', HOOK.url, 'Failed', '8', '500', 'answered 500']);
    expect(mail.slice(1)).toEqual(['Quota threshold reached', '4', 'Mail', 'ops@acme.example', 'Pending', '1', '—', 'connect ECONNREFUSED']);
  });

  it('shows site admins the mails kept without SMTP, with their text', async () => {
    renderScreen(signedIn(<Mails />), {
      path: '/admin/notifications',
      answers: {
        'GET /user': [200, { ...OWNER, is_admin: true }],
        'GET /admin/notifications/mails': [
          200,
          [
            {
              id: 1,
              contractId: 4,
              recipient: 'ops@acme.example',
              subject: 'acme: 80% of the productdb quota used',
              status: 'kept',
              text: 'Used 96.5 of 120 cpu-core-hours.',
              html: '<p>Used</p>',
              createdAt: '2026-01-01T00:00:00Z',
            },
          ],
        ],
      },
    });
    const table = await screen.findByRole('table', { name: 'Notice mails, newest first (1)' });
    const cells = firstRow(table);
    expect(cells[1]).toBe('ops@acme.example');
    expect(cells[4]).toBe('Kept (no SMTP)');
    expect(within(table).getByText('Used 96.5 of 120 cpu-core-hours.')).toBeTruthy();
  });

  it("uses the site's routes on the admin side", async () => {
    const api = renderScreen(signedIn(<Webhooks routes={siteRoutes} />), {
      path: '/admin/notifications',
      answers: { 'GET /user': [200, { ...OWNER, is_admin: true }], 'GET /admin/notifications/webhooks': [200, []] },
    });
    expect((await screen.findByText(/Site-wide webhook endpoints/)).textContent).toBe('Site-wide webhook endpoints (0): none yet; register one below.');
    expect(api.calls.map((c) => c.call)).toContain('GET /admin/notifications/webhooks');
  });
});
