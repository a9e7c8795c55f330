import { screen, waitFor, within } from '@testing-library/react';
import { renderScreen } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import { acme, MEMBER_HOLDS, OWNER_HOLDS } from './fixtures';
import { Tokens } from './tokens';

const at = { path: '/orgs/acme/tokens', pattern: '/orgs/:org/tokens' };
const BUS = { id: 5, busPubKey: 'UABC', clusterID: 'c-1', productName: 'productdb', revoked: false };
const ACCESS = {
  id: 9,
  name: 'sync',
  tokenLastEight: 'abcd1234',
  createdAt: '2026-01-01T00:00:00Z',
  hasRecentActivity: true,
  hasUsed: true,
  expDate: '',
};
const withTokens = (holds: string[]) => ({
  ...acme(holds),
  'GET /orgs/acme/tokens/bus-tokens': [200, [BUS]] as [number, unknown],
  'GET /orgs/acme/tokens/access-tokens': [200, [ACCESS]] as [number, unknown],
});

describe("an organization's machine tokens", () => {
  it('offers an owner to revoke a bus token and delete an access token', async () => {
    renderScreen(signedIn(<Tokens />), { ...at, answers: withTokens(OWNER_HOLDS) });
    expect(await screen.findByRole('button', { name: 'Revoke bus token 5' })).toBeTruthy();
    expect(await screen.findByRole('button', { name: 'Delete access token sync' })).toBeTruthy();
  });

  it('shows them to one who may only list them, without the buttons', async () => {
    renderScreen(signedIn(<Tokens />), { ...at, answers: withTokens([...MEMBER_HOLDS, 'list_bus_token', 'list_access_token']) });
    const bus = await screen.findByRole('table', { name: 'Message-bus tokens of acme' });
    expect(within(bus).getAllByRole('row')[1].textContent).toContain('UABC');
    expect(screen.queryByRole('button', { name: /^Revoke/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Delete/ })).toBeNull();
  });

  it('explains an organization without a system admin yet rather than failing', async () => {
    const none = [400, { message: 'the organization has no system admin' }] as [number, unknown];
    renderScreen(signedIn(<Tokens />), {
      ...at,
      answers: { ...acme(OWNER_HOLDS), 'GET /orgs/acme/tokens/bus-tokens': none, 'GET /orgs/acme/tokens/access-tokens': none },
    });
    await waitFor(() => expect(screen.getAllByText(/None: the organization has no system admin/)).toHaveLength(2));
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
