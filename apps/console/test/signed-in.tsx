import type { ReactElement, ReactNode } from 'react';
import { SessionProvider, useSession } from '../src/session';

/** The user a component test is signed in as, unless it says otherwise. */
export const OWNER = { id: 1, login: 'olivia', full_name: 'Olivia Owner', email: 'olivia@example.com', is_admin: false };

/**
 * A screen as a signed-in user sees it: the session restores a stored token (as after a page reload) and the screen
 * renders once `GET /user` (which the test answers) named the user.
 */
export function signedIn(screen: ReactElement): ReactElement {
  sessionStorage.setItem('platform.console.session', JSON.stringify({ token: 'test-token', minted: false }));
  return (
    <SessionProvider>
      <Once>{screen}</Once>
    </SessionProvider>
  );
}

function Once({ children }: { children: ReactNode }) {
  return useSession().session ? <>{children}</> : null;
}
