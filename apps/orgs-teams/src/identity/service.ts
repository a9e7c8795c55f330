import { UnavailableError } from '@platform/errors';
import { orgsTeamsV1 } from '@platform/proto';
import { bindService, versionOf, type CallContext, type ServiceBinding } from '@platform/service-kit';
import type { Relationships } from '../relationships';
import type { Identity } from './identity';
import type { Sessions } from './sessions';
import type { TwoFactor } from './totp';
import type { ExternalSignIn } from './oidc';
import type { GroupMappingStore } from './group-mapping-store';
import type { EmailVerification } from './email-verification';
import type { PasswordReset } from './password-reset';
import { createUser } from './site-admin';

/**
 * What user administration answers (accounts/user-admin.ts, which composes accounts with organizations and teams:
 * handed in, so identity does not import them).
 */
export interface UserAdministration {
  search(req: orgsTeamsV1.SearchUsersRequest): Promise<orgsTeamsV1.SearchUsersResponse>;
  edit(req: orgsTeamsV1.EditUserRequest, ctx: CallContext): Promise<orgsTeamsV1.User>;
  delete(req: orgsTeamsV1.DeleteUserRequest, ctx: CallContext): Promise<orgsTeamsV1.DeleteUserResponse>;
  editSettings(req: orgsTeamsV1.EditUserSettingsRequest): Promise<orgsTeamsV1.User>;
  changePassword(req: orgsTeamsV1.ChangePasswordRequest): Promise<void>;
  clearLockout(login: string): Promise<void>;
}

/**
 * The OrgsTeamsService methods that change nothing but sign-in state; every other one is announced (changes.ts). A
 * read runs with a collector too, and what it writes on the way is announced as the sign-in notice, which who-a-token-
 * belongs-to does not follow (so a token's use does not drop the answer its reader is about to keep):
 * - authenticate, authenticateBasic: the token's last use and the account's last sign-in, each refreshed at most once a
 *   minute; authenticateBasic also counts failures toward a lockout, in memory, and may spend a second factor's code.
 * - authenticateSession: the session's last use, or the deletion of an expired session.
 * - checkPasswordReset: a wrong code counted against its client address, in memory, or an expired link's row deleted.
 */
export const ORGS_TEAMS_READS: readonly (keyof typeof orgsTeamsV1.OrgsTeamsServiceService)[] = [
  'getVersion',
  'authenticate',
  'authenticateBasic',
  'getUser',
  'getUsers',
  'getAccounts',
  'listUserAccounts',
  'listTokens',
  'searchUsers',
  'authenticateSession',
  'listSessions',
  'getTwoFactor',
  'getTwoFactorRequirement',
  'listGroupMappings',
  'listExternalIdentities',
  'checkPasswordReset',
];

/** The OrgsTeamsService RPCs: accounts, personal access tokens and authentication. */
export function orgsTeamsService(
  identity: Identity,
  relationships: Relationships,
  /** User administration and own settings; absent, those methods are unavailable (a test's identity service). */
  userAdmin?: UserAdministration,
  /** Console sessions and sign-up; absent, those methods are unavailable. */
  sessions?: Sessions,
  /** TOTP second factors; absent, those methods are unavailable. */
  twoFactor?: TwoFactor,
  /** Sign-in through the site's OpenID provider; absent, it is unavailable. */
  externalSignIn?: ExternalSignIn,
  /** Single sign-on's groups-to-teams mappings; absent, those methods are unavailable. */
  groupMappings?: GroupMappingStore,
  /** Verification of users' addresses; absent, those methods are unavailable. */
  emailVerification?: EmailVerification,
  /** Forgotten passwords' reset links; absent, those methods are unavailable. */
  passwordReset?: PasswordReset,
): ServiceBinding<typeof orgsTeamsV1.OrgsTeamsServiceService> {
  return bindService(orgsTeamsV1.OrgsTeamsServiceService, {
    getVersion: async () => versionOf('orgs-teams'),
    authenticate: (req, ctx) => identity.authenticate(req.token, ctx),
    authenticateBasic: (req) => identity.authenticateBasic(req.username, req.password, req.otp),
    createUser: (req, ctx) => createUser(identity, relationships, req, ctx),
    getUser: (req) => identity.getUser(req),
    deleteUnusedUser: async (req) => (await identity.deleteUnusedUser(req.id), {}),
    getUsers: async (req) => ({ users: await identity.getUsers(req.ids) }),
    getAccounts: async (req) => ({ users: await identity.getAccounts(req.ids) }),
    listUserAccounts: (req) => identity.listUserAccounts(req.afterId, req.limit),
    createToken: (req) => identity.createToken(req.userId, req.name, req.scope, req.scopeAccountId, req.accessScopes),
    listTokens: async (req) => ({ tokens: await identity.listTokens(req.userId) }),
    deleteToken: async (req) => (await identity.deleteToken(req.userId, req.id), {}),
    searchUsers: (req) => admin().search(req),
    editUser: (req, ctx) => admin().edit(req, ctx),
    deleteUser: (req, ctx) => admin().delete(req, ctx),
    editUserSettings: (req) => admin().editSettings(req),
    changePassword: async (req) => (await admin().changePassword(req), {}),
    clearSignInLockout: async (req) => (await admin().clearLockout(req.login), {}),
    createSession: (req) => consoleSessions().create(req.userId, req.userAgent, req.address),
    authenticateSession: (req) => consoleSessions().authenticate(req.secret),
    listSessions: async (req) => ({ sessions: await consoleSessions().list(req.userId) }),
    deleteSession: async (req) => (await consoleSessions().delete(req.userId, req.id), {}),
    signUp: (req) => consoleSessions().signUp(req),
    signInExternal: (req) => {
      if (!externalSignIn) throw new UnavailableError('single sign-on is not served here');
      return externalSignIn.signIn(req);
    },
    getTwoFactor: (req) => totp().status(req.userId),
    beginTwoFactorEnrolment: (req) => totp().begin(req.userId),
    confirmTwoFactor: (req) => totp().confirm(req.userId, req.code),
    disableTwoFactor: async (req) => (await totp().disable(req.userId, req.password, req.code), {}),
    regenerateRecoveryCodes: (req) => totp().regenerate(req.userId, req.password, req.code),
    resetTwoFactor: async (req) => (await totp().reset(req.login), {}),
    getTwoFactorRequirement: async () => ({ requirement: await totp().requirement() }),
    setTwoFactorRequirement: async (req) => ({ requirement: await totp().setRequirement(req.requirement) }),
    revokeUserCredentials: async (req) => {
      const revoked = await identity.revokeCredentials(req.login);
      return { tokens: revoked.tokens, sessions: revoked.sessions };
    },
    listGroupMappings: async (req) => ({ mappings: await mappings().list(req.orgId) }),
    createGroupMapping: (req) => mappings().create(req.orgId, req.group, req.teamId),
    deleteGroupMapping: async (req) => (await mappings().delete(req.orgId, req.id), {}),
    linkExternalIdentity: (req) => external().link(req.userId, req.issuer, req.subject),
    listExternalIdentities: async (req) => ({ identities: await external().list(req.userId) }),
    unlinkExternalIdentity: async (req) => (await external().unlink(req.userId, req.issuer), {}),
    sendVerificationMail: async (req) => {
      if (req.userId) await verification().resend(req.userId);
      else await verification().resendByLogin(req.login);
      return {};
    },
    verifyEmail: (req) => verification().verify(req.token),
    requestPasswordReset: async (req) => (reset().request(req.login, req.address), {}),
    checkPasswordReset: (req) => reset().check(req.code, req.address),
    resetPassword: (req, ctx) => reset().reset(req, ctx.requestId),
  });

  function reset(): PasswordReset {
    if (!passwordReset) throw new UnavailableError('password reset is not served here');
    return passwordReset;
  }

  function external(): ExternalSignIn {
    if (!externalSignIn) throw new UnavailableError('single sign-on is not served here');
    return externalSignIn;
  }

  function verification(): EmailVerification {
    if (!emailVerification) throw new UnavailableError('e-mail verification is not served here');
    return emailVerification;
  }

  function mappings(): GroupMappingStore {
    if (!groupMappings) throw new UnavailableError('group mappings are not served here');
    return groupMappings;
  }

  function totp(): TwoFactor {
    if (!twoFactor) throw new UnavailableError('two-factor authentication is not served here');
    return twoFactor;
  }

  function consoleSessions(): Sessions {
    if (!sessions) throw new UnavailableError('console sessions are not served here');
    return sessions;
  }

  function admin(): UserAdministration {
    if (!userAdmin) throw new UnavailableError('user administration is not served here');
    return userAdmin;
  }
}
