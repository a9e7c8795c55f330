import { screen, within } from '@testing-library/react';
import { acme, MEMBER_HOLDS, OWNER_HOLDS } from '../areas/orgs/fixtures';
import { renderScreen } from '../../test/render';
import { signedIn } from '../../test/signed-in';
import { OrgNav } from './org-nav';

const at = { path: '/orgs/acme', pattern: '/orgs/:org' };
const tabs = async (holds: string[], expected: string) => {
  renderScreen(signedIn(<OrgNav org="acme" />), { ...at, answers: acme(holds) });
  const nav = await screen.findByRole('navigation', { name: 'Organization acme' });
  // The tabs follow what the caller holds, once allowed-permissions has answered.
  await within(nav).findByRole('link', { name: expected });
  return within(nav)
    .getAllByRole('link')
    .map((l) => l.textContent);
};

describe("an organization's tabs", () => {
  it('are every screen for an owner', async () => {
    expect(await tabs(OWNER_HOLDS, 'Settings')).toEqual([
      'Members',
      'Teams',
      'Roles',
      'Bus tokens',
      'Who has access',
      'Service accounts',
      'Clusters',
      'Contracts',
      'Notifications',
      'Usage',
      'Settings',
    ]);
  });

  it("leave out the owners' screens for a member, who would be refused them", async () => {
    expect(await tabs(MEMBER_HOLDS, 'Contracts')).toEqual(['Members', 'Teams', 'Roles', 'Clusters', 'Contracts']);
  });
});
