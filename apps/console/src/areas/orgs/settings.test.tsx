import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { renderScreen } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import { acme, MEMBER_HOLDS, ORG, OWNER_HOLDS } from './fixtures';
import { OrgList } from './org-list';
import { OrgSettings } from './settings';

const at = { path: '/orgs/acme/settings', pattern: '/orgs/:org/settings' };
const AVATAR = 'http://platform.example:8080/api/v1/objects/avatars/default/10.png?expires=1&signature=abc';

/** A file as the page's requests carry it: Node's (the tests' fetch and FormData are Node's, jsdom's File is not). */
async function nodeFile(bytes: number[], name: string, type: string): Promise<File> {
  const blob = await new Response(new Uint8Array(bytes), { headers: { 'content-type': type } }).blob();
  const form = new FormData();
  form.append('file', blob, name);
  return form.get('file') as File;
}

/** The settings screen, and the organizations list it leads to once the organization is deleted. */
const screens = (
  <Routes>
    <Route path="/orgs/:org/settings" element={<OrgSettings />} />
    <Route path="/orgs" element={<OrgList />} />
  </Routes>
);

describe("an organization's settings", () => {
  it('saves the options an owner edits, sending every option of the form', async () => {
    let stored = { ...ORG };
    const api = renderScreen(signedIn(<OrgSettings />), {
      ...at,
      answers: {
        ...acme(OWNER_HOLDS),
        'GET /orgs/acme': () => [200, stored],
        'GET /orgs/acme/avatar/': [200, AVATAR],
        'PATCH /orgs/acme': async (req) => ((stored = { ...stored, ...(await req.json()) }), [200, stored]),
      },
    });
    const form = await screen.findByRole('form', { name: 'Organization options' });
    expect(within(form).getByRole('textbox', { name: 'Full name' })).toHaveProperty('value', 'Acme Inc');
    fireEvent.change(within(form).getByRole('textbox', { name: 'Full name' }), { target: { value: 'Acme Corporation' } });
    fireEvent.change(within(form).getByRole('textbox', { name: 'Website' }), { target: { value: 'acme.example' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save options' }));
    expect(within(form).getByRole('alert').textContent).toBe('Website: a web address starting with http:// or https://');
    fireEvent.change(within(form).getByRole('textbox', { name: 'Website' }), { target: { value: 'https://acme.example' } });
    fireEvent.change(within(form).getByRole('textbox', { name: 'Location' }), { target: { value: 'Lisbon' } });
    fireEvent.change(within(form).getByRole('combobox', { name: 'Visibility' }), { target: { value: 'limited' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save options' }));
    expect((await screen.findByRole('status')).textContent).toBe('Saved the options of acme.');
    expect(api.calls.find((c) => c.call === 'PATCH /orgs/acme')?.body).toEqual({
      full_name: 'Acme Corporation',
      description: 'Widgets',
      website: 'https://acme.example',
      location: 'Lisbon',
      visibility: 'limited',
    });
  });

  it('shows the avatar from the platform whatever host its URL names, and uploads a new image as a multipart form', async () => {
    let uploaded: FormDataEntryValue | null = null;
    renderScreen(signedIn(<OrgSettings />), {
      ...at,
      answers: {
        ...acme(OWNER_HOLDS),
        'GET /orgs/acme/avatar/': [200, AVATAR],
        'POST /orgs/acme/avatar/': async (req) => {
          uploaded = (await req.formData()).get('avatar');
          return [200, AVATAR.replace('default/10.png', 'org/10/abc.png')];
        },
      },
    });
    const image = await screen.findByRole('img', { name: 'Avatar of acme' });
    expect(image.getAttribute('src')).toBe('/api/v1/objects/avatars/default/10.png?expires=1&signature=abc');
    const form = screen.getByRole('form', { name: 'New avatar' });
    const file = await nodeFile([0x89, 0x50, 0x4e, 0x47], 'logo.png', 'image/png');
    fireEvent.change(within(form).getByLabelText('Image'), { target: { files: [file] } });
    fireEvent.click(within(form).getByRole('button', { name: 'Upload avatar' }));
    expect((await within(form).findByRole('status')).textContent).toBe('The avatar of acme is the new image.');
    expect((uploaded as unknown as File).name).toBe('logo.png');
    await waitFor(() => expect(screen.getByRole('img', { name: 'Avatar of acme' }).getAttribute('src')).toContain('/org/10/abc.png'));
  });

  it('deletes the organization only once its name is typed, then lists the organizations left', async () => {
    let deleted = false;
    const api = renderScreen(signedIn(screens), {
      path: at.path,
      pattern: '*',
      answers: {
        ...acme(OWNER_HOLDS),
        'GET /orgs/acme/avatar/': [200, AVATAR],
        'DELETE /orgs/acme': () => ((deleted = true), [204]),
        'GET /user/orgs': () => [200, deleted ? [] : [ORG], { 'X-Total-Count': deleted ? '0' : '1' }],
      },
    });
    const form = await screen.findByRole('form', { name: 'Delete organization acme' });
    const button = within(form).getByRole('button', { name: 'Delete organization acme' });
    expect(button).toHaveProperty('disabled', true);
    fireEvent.change(within(form).getByRole('textbox', { name: 'Type acme to confirm' }), { target: { value: 'acm' } });
    expect(button).toHaveProperty('disabled', true);
    fireEvent.change(within(form).getByRole('textbox', { name: 'Type acme to confirm' }), { target: { value: 'acme' } });
    fireEvent.click(button);
    expect((await screen.findByRole('status')).textContent).toBe('Deleted organization acme.');
    expect(await screen.findByText(/you are in none yet/)).toBeTruthy();
    expect(api.calls.filter((c) => c.call.startsWith('DELETE'))).toEqual([{ call: 'DELETE /orgs/acme' }]);
  });

  it("shows the API's refusal to delete while other owners remain", async () => {
    renderScreen(signedIn(<OrgSettings />), {
      ...at,
      answers: {
        ...acme(OWNER_HOLDS),
        'GET /orgs/acme/avatar/': [200, AVATAR],
        'DELETE /orgs/acme': [403, { message: 'acme has 1 other owner: remove them from Owners first' }],
      },
    });
    const form = await screen.findByRole('form', { name: 'Delete organization acme' });
    fireEvent.change(within(form).getByRole('textbox', { name: 'Type acme to confirm' }), { target: { value: 'acme' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Delete organization acme' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('acme has 1 other owner: remove them from Owners first (403)');
  });

  it('shows a member who opens it the "no access" page, and nothing of the screen', async () => {
    renderScreen(signedIn(<OrgSettings />), { ...at, answers: acme(MEMBER_HOLDS) });
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText(/^This screen is for those who may edit acme, change its avatar or delete it\./)).toBeTruthy();
    expect(within(page).getByRole('link', { name: 'Back to acme' }).getAttribute('href')).toBe('/orgs/acme');
    expect(screen.queryByRole('form')).toBeNull();
    expect(screen.queryByRole('navigation', { name: 'Organization acme' })).toBeNull();
  });
});
