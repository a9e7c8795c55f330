import { fireEvent, screen, within } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { renderScreen } from '../../../test/render';
import { OWNER, signedIn } from '../../../test/signed-in';
import { OrgList } from './org-list';
import { ORG } from './fixtures';

const created = (name: string) => ({ ...ORG, id: 11, username: name, name });

/** The organizations screen with a create that succeeds for `acme2` and is refused (409) for `taken`. */
function renderOrgList() {
  return renderScreen(
    signedIn(
      <Routes>
        <Route path="/orgs" element={<OrgList />} />
      </Routes>,
    ),
    {
      path: '/orgs',
      pattern: '/*',
      answers: {
        'GET /user': [200, OWNER],
        'GET /user/orgs': [200, [ORG], { 'X-Total-Count': '1' }],
        'POST /orgs': async (req) => {
          const { username } = (await req.json()) as { username: string };
          return username === 'taken' ? [409, { message: 'organization taken already exists' }] : [201, created(username)];
        },
      },
    },
  );
}

async function create(name: string) {
  const form = await screen.findByRole('form', { name: 'Create organization' });
  fireEvent.change(within(form).getByLabelText(/Organization name/), { target: { value: name } });
  fireEvent.submit(form);
  return form;
}

describe('the organizations screen', () => {
  it('drops the last creation’s success and its link when the next one is refused before sending', async () => {
    renderOrgList();
    const form = await create('acme2');
    expect((await within(form).findByRole('status')).textContent).toBe('Created organization acme2; you are its owner.');
    expect(screen.getByRole('link', { name: 'Open acme2' })).toBeTruthy();

    await create('not a name!');
    expect((await within(form).findByRole('alert')).textContent).toMatch(/^Organization name: letters, digits/);
    expect(within(form).queryByRole('status')).toBeNull();
    expect(screen.queryByRole('link', { name: 'Open acme2' })).toBeNull();
  });

  it('drops the last creation’s success when the next one is refused by the API', async () => {
    const { calls } = renderOrgList();
    const form = await create('acme2');
    await within(form).findByRole('status');
    await create('taken');
    expect((await within(form).findByRole('alert')).textContent).toBe('organization taken already exists (409)');
    expect(within(form).queryByRole('status')).toBeNull();
    expect(screen.queryByRole('link', { name: 'Open acme2' })).toBeNull();
    expect(calls.filter((c) => c.call === 'POST /orgs')).toHaveLength(2);
  });

  it('drops a problem once the next creation succeeds', async () => {
    renderOrgList();
    const form = await create('');
    expect((await within(form).findByRole('alert')).textContent).toBe('Organization name is required');
    await create('acme3');
    expect((await within(form).findByRole('status')).textContent).toBe('Created organization acme3; you are its owner.');
    expect(within(form).queryByRole('alert')).toBeNull();
  });
});
