import { NotAllowedError } from '@platform/errors';
import type { Route, User } from '../../route';

/**
 * What a user who must change its password may still do (docs/authentication.md, "Must change password"): sign in
 * (make a token with Basic credentials or start a console session, as Gitea lets the web sign-in happen before it asks for the change), see
 * who it is, change the password, and sign out.
 */
const ALLOWED = new Set([
  'POST /users/:username/tokens',
  'GET /user',
  'POST /user/password',
  'DELETE /user/token',
  // The console's sign-in, its session and sign-out.
  'POST /user/session',
  'GET /user/session',
  'DELETE /user/session',
]);

/**
 * What a password sign-in of a user the site requires a second factor of, and who has none yet, may do
 * (docs/authentication.md, "Second factor (TOTP)"): the console's session, who it is, and enrolment.
 */
const ALLOWED_BEFORE_ENROLMENT = new Set([
  'GET /user',
  'POST /user/session',
  'GET /user/session',
  'DELETE /user/session',
  'GET /user/two-factor',
  'POST /user/two-factor/enrolment',
  'POST /user/two-factor',
]);

/**
 * 403 for a caller who must change its password, on every row but those above; likewise for a caller who must enrol
 * a second factor first.
 */
export function assertPasswordChanged(route: Pick<Route, 'method' | 'path'>, caller: User | undefined): void {
  const row = `${route.method.toUpperCase()} ${route.path}`;
  if (caller?.mustEnrollTwoFactor && !ALLOWED_BEFORE_ENROLMENT.has(row))
    throw new NotAllowedError('this site requires two-factor authentication: enrol a second factor first (POST /api/v1/user/two-factor/enrolment)');
  if (!caller?.mustChangePassword || ALLOWED.has(row)) return;
  throw new NotAllowedError('you must change your password: POST /api/v1/user/password with old_password and new_password');
}
