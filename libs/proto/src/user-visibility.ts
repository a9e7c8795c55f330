/**
 * What of a user its viewer may see, written once for every door that presents users: the gateway's presenters
 * (REST) and the public gRPC methods' answers to service accounts (method-policy.ts). docs/authentication.md, "E-mails".
 */

/** Who looks at a user: the calling account (a person or a service account); undefined for an anonymous caller. */
export interface UserViewer {
  id: number;
  isAdmin: boolean;
}

/**
 * Whether the viewer may see the user's e-mail address: the user itself and site admins, nobody else. Gitea also
 * shows it to any other signed-in caller unless the user keeps it private (`keep_email_private`, our `hide_email`);
 * here accounts of different organizations (client organizations, other teams' service accounts) must not learn
 * each other's addresses, so it is hidden from every other caller whether or not the user keeps it private.
 */
export function seesEmailOf(viewer: UserViewer | undefined, user: { id: number }): boolean {
  return !!viewer && (viewer.isAdmin || viewer.id === user.id);
}

/**
 * A user as the viewer may see it: its e-mail address empty unless seesEmailOf. Empty rather than Gitea's no-reply
 * placeholder (`<login>@noreply.<domain>`), which names no mailbox and would only look like an address.
 */
export function userAsSeenBy<U extends { id: number; email: string; emailVerified?: boolean }>(user: U, viewer: UserViewer | undefined): U {
  // Whether the address is verified says something about it too, so it goes with it.
  return seesEmailOf(viewer, user) ? user : { ...user, email: '', emailVerified: undefined };
}
