import type { User } from './gen/platformadmin/orgsteams/v1/orgsteams';

/**
 * What of a user its viewer may see, written once for every door that presents users: the gateway's presenters
 * (REST) and the public gRPC methods' answers to service accounts (method-policy.ts). docs/authentication.md, "What
 * others see of an account".
 */

/** Who looks at a user: the calling account (a person or a service account); undefined for an anonymous caller. */
export interface UserViewer {
  id: number;
  isAdmin: boolean;
}

/**
 * Whether the viewer sees the whole account: the user itself and site admins, nobody else (Gitea's `authed` in
 * `convert.ToUser`).
 */
export function seesWholeAccountOf(viewer: UserViewer | undefined, user: { id: number }): boolean {
  return !!viewer && (viewer.isAdmin || viewer.id === user.id);
}

/**
 * What only seesWholeAccountOf shows, each with the value every other viewer gets.
 *
 * - The e-mail address: Gitea also shows it to any other signed-in caller unless the user keeps it private
 *   (`keep_email_private`, our `hide_email`); here accounts of different organizations (client organizations, other
 *   teams' service accounts) must not learn each other's addresses, so it is hidden whether or not the user keeps it
 *   private. Empty rather than Gitea's no-reply placeholder (`<login>@noreply.<domain>`), which names no mailbox.
 * - The account's flags, as Gitea's zero values (`toUser` without `authed`): no one else learns who the site admins
 *   are, who is locked out or when anyone last signed in.
 * - The account's own settings and sign-in state, which no Gitea answer shows to others either.
 */
const HIDDEN_FROM_OTHERS = {
  email: '',
  // Whether the address is verified says something about it too, so it goes with it.
  emailVerified: undefined,
  isAdmin: false,
  lastLoginUnix: 0,
  active: false,
  prohibitLogin: false,
  language: '',
  loginName: '',
  mustChangePassword: false,
  allowCreateOrganization: false,
  theme: '',
  diffViewStyle: '',
  hideEmail: false,
  hideActivity: false,
  signInLockedUntilUnix: 0,
  mustEnrollTwoFactor: undefined,
} as const satisfies Partial<User>;

/** A user as the viewer may see it: whole for the user itself and site admins, else with HIDDEN_FROM_OTHERS. */
export function userAsSeenBy(user: User, viewer: UserViewer | undefined): User {
  return seesWholeAccountOf(viewer, user) ? user : { ...user, ...HIDDEN_FROM_OTHERS };
}
