import { User } from './gen/platformadmin/orgsteams/v1/orgsteams';
import { userAsSeenBy } from './user-visibility';

// What of a user each viewer is answered (docs/authentication.md, "What others see of an account").

/** An account with every field set to something no zero value equals. */
const ALICE: User = {
  id: 5,
  login: 'alice',
  fullName: 'Alice A.',
  email: 'alice@example.com',
  avatarUrl: 'https://platform.example/avatars/alice',
  language: 'fr-FR',
  isAdmin: true,
  lastLoginUnix: 1_790_000_000,
  createdUnix: 1_780_000_000,
  type: 0,
  active: true,
  prohibitLogin: true,
  location: 'Lyon',
  website: 'https://alice.example',
  description: 'ops',
  orgAdmin: true,
  clientOrgUser: true,
  mustChangePassword: true,
  serviceAccount: false,
  serviceAccountOrgId: 0,
  loginName: 'alice@corp',
  allowCreateOrganization: true,
  theme: 'dark',
  diffViewStyle: 'split',
  hideEmail: true,
  hideActivity: true,
  signInLockedUntilUnix: 1_790_000_600,
  mustEnrollTwoFactor: true,
  emailVerified: true,
};

/** What anyone is shown of another account: its public profile. */
const PUBLIC: (keyof User)[] = [
  'id',
  'login',
  'fullName',
  'avatarUrl',
  'createdUnix',
  'type',
  'location',
  'website',
  'description',
  'orgAdmin',
  'clientOrgUser',
  'serviceAccount',
  'serviceAccountOrgId',
];

/** Gitea's zero value of each field others are not shown (`convert.ToUser` without `authed`). */
const ZERO: Partial<User> = {
  email: '',
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
};

describe('userAsSeenBy', () => {
  it('answers the account whole to the user itself and to site admins (people and service accounts alike)', () => {
    expect(userAsSeenBy(ALICE, { id: 5, isAdmin: false })).toEqual(ALICE);
    expect(userAsSeenBy(ALICE, { id: 99, isAdmin: true })).toEqual(ALICE);
  });

  it("answers anyone else the public profile, with Gitea's zero values for the e-mail address and every account flag", () => {
    const expected = { ...ALICE, ...ZERO };
    for (const viewer of [{ id: 6, isAdmin: false }, undefined]) expect(userAsSeenBy(ALICE, viewer)).toEqual(expected);
  });

  it('classifies every field of the User: a new one is public or hidden on purpose', () => {
    const fields = Object.keys(User.fromPartial({ mustEnrollTwoFactor: false, emailVerified: false }));
    expect(fields.filter((f) => !PUBLIC.includes(f as keyof User) && !(f in ZERO))).toEqual([]);
  });
});
