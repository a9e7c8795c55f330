import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { ReactElement, ReactNode } from 'react';
import { renderScreen, type Answer } from '../../../test/render';
import { SessionProvider, useSession } from '../../session';
import AccountArea from '.';

const USER = { id: 7, login: 'nina', full_name: 'Nina N', email: 'nina@example.com', is_admin: false };
const session = (id: number, current: boolean, user_agent: string) => ({
  id,
  user_agent,
  address: '203.0.113.9',
  created_at: '2026-12-01T10:00:00Z',
  last_used_at: '2026-12-02T10:00:00Z',
  expires_at: '2026-12-09T10:00:00Z',
  current,
});

/** Signed in by a session cookie, as after a reload: the console asks GET /user/session for its CSRF token. */
function signedInByCookie(screenEl: ReactElement): ReactElement {
  sessionStorage.clear();
  return (
    <SessionProvider>
      <Once>{screenEl}</Once>
    </SessionProvider>
  );
}
function Once({ children }: { children: ReactNode }) {
  return useSession().session ? <>{children}</> : null;
}

const base: Record<string, Answer> = {
  'GET /user/session': [200, { user: USER, session: session(1, true, 'Firefox'), csrf_token: 'csrf-of-this-session' }],
  'GET /user/settings': [200, { full_name: 'Nina N', website: '', location: '', description: '', language: '', theme: '', diff_view_style: '', hide_email: false, hide_activity: false }],
};

describe('the account page', () => {
  it('lists the sessions with this one marked, and revokes another with the CSRF token', async () => {
    let sessions = [session(1, true, 'Firefox'), session(2, false, 'Chromium on a laptop')];
    let revokedWith: string | null = null;
    const { calls } = renderScreen(signedInByCookie(<AccountArea />), {
      answers: {
        ...base,
        'GET /user/sessions': () => [200, sessions],
        'DELETE /user/sessions/2': (req) => {
          revokedWith = req.headers.get('x-csrf-token');
          sessions = sessions.filter((s) => s.id !== 2);
          return [204];
        },
      },
    });
    const table = await screen.findByRole('table', { name: 'Signed-in sessions' });
    const rows = within(table).getAllByRole('row');
    expect(rows[1].textContent).toContain('Firefox');
    expect(rows[1].textContent).toContain('this session');
    expect(rows[2].textContent).toContain('Chromium on a laptop');
    expect(rows[2].textContent).not.toContain('this session');

    fireEvent.click(within(rows[2]).getByRole('button', { name: 'Revoke' }));
    fireEvent.click(within(rows[2]).getByRole('button', { name: 'Confirm revoke' }));
    await waitFor(() => expect(screen.queryByText('Chromium on a laptop')).toBeNull());
    expect(revokedWith).toBe('csrf-of-this-session');
    expect(calls.filter((c) => c.call === 'GET /user/sessions')).toHaveLength(2);
  });

  it('asks for the password before the tokens, then lists them with their scopes and shows a new one once', async () => {
    const auth: (string | null)[] = [];
    const tokens = [{ id: 3, name: 'ci', sha1: '', token_last_eight: 'abcd1234', scopes: ['read:organization'], created_at: '2026-12-01T10:00:00Z', last_used_at: '0001-01-01T00:00:00Z' }];
    const { calls } = renderScreen(signedInByCookie(<AccountArea />), {
      answers: {
        ...base,
        'GET /user/sessions': [200, [session(1, true, 'Firefox')]],
        'GET /users/nina/tokens': (req) => {
          auth.push(req.headers.get('authorization'));
          return req.headers.get('authorization') === `Basic ${btoa('nina:nina-password')}` ? [200, tokens] : [401, { message: 'invalid username or password' }];
        },
        'POST /users/nina/tokens': (req) => {
          auth.push(req.headers.get('authorization'));
          return [201, { id: 4, name: 'deploy', sha1: 'f'.repeat(40), token_last_eight: 'ffffffff', scopes: ['write:organization'] }];
        },
      },
    });
    const unlock = await screen.findByRole('form', { name: 'Show your access tokens' });
    expect(screen.queryByRole('table', { name: 'Your access tokens' })).toBeNull();

    fireEvent.change(within(unlock).getByLabelText(/Password/), { target: { value: 'wrong-password' } });
    fireEvent.click(within(unlock).getByRole('button', { name: 'Show tokens' }));
    expect((await within(unlock).findByRole('alert')).textContent).toContain('invalid username or password');
    // A wrong password for the tokens does not sign the session out.
    expect(screen.getByRole('heading', { name: 'Your account' })).toBeTruthy();

    fireEvent.change(within(unlock).getByLabelText(/Password/), { target: { value: 'nina-password' } });
    fireEvent.click(within(unlock).getByRole('button', { name: 'Show tokens' }));
    const table = await screen.findByRole('table', { name: 'Your access tokens' });
    expect(table.textContent).toContain('read:organization');
    expect(table.textContent).toContain('never');

    const create = screen.getByRole('form', { name: 'Create an access token' });
    fireEvent.change(within(create).getByLabelText(/Token name/), { target: { value: 'deploy' } });
    fireEvent.click(within(create).getByLabelText('write:organization'));
    fireEvent.click(within(create).getByRole('button', { name: 'Create token' }));
    const secret = await screen.findByRole('region', { name: 'New token deploy' });
    expect((within(secret).getByLabelText('Token deploy') as HTMLInputElement).value).toBe('f'.repeat(40));
    expect(calls.find((c) => c.call === 'POST /users/nina/tokens')?.body).toEqual({ name: 'deploy', scopes: ['write:organization'] });
    expect(auth.slice(-1)[0]).toBe(`Basic ${btoa('nina:nina-password')}`);
  });

  it('changes the password with the old one', async () => {
    const { calls } = renderScreen(signedInByCookie(<AccountArea />), {
      answers: { ...base, 'GET /user/sessions': [200, []], 'POST /user/password': [204] },
    });
    const form = await screen.findByRole('form', { name: 'Change password' });
    fireEvent.change(within(form).getByLabelText(/Current password/), { target: { value: 'old-password' } });
    fireEvent.change(within(form).getByLabelText(/^New password/), { target: { value: 'new-password-1' } });
    fireEvent.change(within(form).getByLabelText(/Repeat the new password/), { target: { value: 'new-password-2' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('The new passwords do not match');
    fireEvent.change(within(form).getByLabelText(/Repeat the new password/), { target: { value: 'new-password-1' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    expect((await within(form).findByRole('status')).textContent).toBe('Password changed.');
    expect(calls.find((c) => c.call === 'POST /user/password')?.body).toEqual({ old_password: 'old-password', new_password: 'new-password-1' });
  });

  it('sets up two-factor authentication: QR code, a first code, then the recovery codes once', async () => {
    let enabled = false;
    let confirmedWith: unknown;
    renderScreen(signedInByCookie(<AccountArea />), {
      answers: {
        ...base,
        'GET /user/sessions': [200, []],
        'GET /users/nina/tokens': [200, []],
        'GET /user/two-factor': () => [200, { enabled, recovery_codes_left: enabled ? 10 : 0, required: false }],
        'POST /user/two-factor/enrolment': [201, { secret: 'JBSWY3DPEHPK3PXP', otpauth_uri: 'otpauth://totp/Platform:nina?secret=JBSWY3DPEHPK3PXP', qr_svg: '<svg></svg>' }],
        'POST /user/two-factor': async (req) => {
          confirmedWith = await req.json();
          enabled = true;
          return [201, { recovery_codes: ['AAAA-BBBB-CCCC-DDDD', 'EEEE-FFFF-GGGG-HHHH'] }];
        },
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Set up two-factor authentication' }));
    const qr = await screen.findByRole('img', { name: /QR code of otpauth:/ });
    expect(qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(screen.getByText('JBSWY3DPEHPK3PXP')).toBeTruthy();
    const form = screen.getByRole('form', { name: 'Confirm two-factor authentication' });
    fireEvent.change(within(form).getByLabelText(/^Code/), { target: { value: ' 123456 ' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Turn on' }));
    const codes = await screen.findByRole('region', { name: 'Recovery codes' });
    expect(within(codes).getByText('AAAA-BBBB-CCCC-DDDD')).toBeTruthy();
    expect(confirmedWith).toEqual({ code: '123456' });
    await screen.findByText('On. 10 recovery codes left.');
  });

  it('asks for the password besides a code to make new recovery codes and to turn two-factor authentication off', async () => {
    let enabled = true;
    const bodies: Record<string, unknown[]> = { renew: [], off: [] };
    renderScreen(signedInByCookie(<AccountArea />), {
      answers: {
        ...base,
        'GET /user/sessions': [200, []],
        'GET /users/nina/tokens': [200, []],
        'GET /user/two-factor': () => [200, { enabled, recovery_codes_left: enabled ? 3 : 0, required: false }],
        'POST /user/two-factor/recovery-codes': async (req) => {
          bodies.renew.push(await req.json());
          return [201, { recovery_codes: ['JJJJ-KKKK-LLLL-MMMM'] }];
        },
        'POST /user/two-factor/disable': async (req) => {
          const body = (await req.json()) as { password: string };
          bodies.off.push(body);
          if (body.password !== 'nina-password') return [403, { message: 'the password is wrong' }];
          enabled = false;
          return [204];
        },
      },
    });
    const renew = await screen.findByRole('form', { name: 'New recovery codes' });
    fireEvent.change(within(renew).getByLabelText(/^Code/), { target: { value: '123456' } });
    fireEvent.click(within(renew).getByRole('button', { name: 'Make new recovery codes' }));
    expect((await within(renew).findByRole('alert')).textContent).toBe('Password is required');
    fireEvent.change(within(renew).getByLabelText(/^Password/), { target: { value: 'nina-password' } });
    fireEvent.click(within(renew).getByRole('button', { name: 'Make new recovery codes' }));
    expect(within(await screen.findByRole('region', { name: 'Recovery codes' })).getByText('JJJJ-KKKK-LLLL-MMMM')).toBeTruthy();
    expect(bodies.renew).toEqual([{ password: 'nina-password', code: '123456' }]);

    const off = screen.getByRole('form', { name: 'Turn off two-factor authentication' });
    fireEvent.change(within(off).getByLabelText(/^Password/), { target: { value: 'not-it' } });
    fireEvent.change(within(off).getByLabelText(/^Code/), { target: { value: ' AAAA-BBBB-CCCC-DDDD ' } });
    fireEvent.click(within(off).getByRole('button', { name: 'Turn off' }));
    expect((await within(off).findByRole('alert')).textContent).toContain('the password is wrong');
    fireEvent.change(within(off).getByLabelText(/^Password/), { target: { value: 'nina-password' } });
    fireEvent.click(within(off).getByRole('button', { name: 'Turn off' }));
    await screen.findByRole('button', { name: 'Set up two-factor authentication' });
    expect(bodies.off).toEqual([
      { password: 'not-it', code: 'AAAA-BBBB-CCCC-DDDD' },
      { password: 'nina-password', code: 'AAAA-BBBB-CCCC-DDDD' },
    ]);
  });
});
