// What the organizations area's component tests' API answers: an organization `acme` (id 10) with two members.
import { OWNER } from '../../../test/signed-in';
import type { Answer } from '../../../test/render';

export const ORG = {
  id: 10,
  username: 'acme',
  name: 'acme',
  full_name: 'Acme Inc',
  description: 'Widgets',
  visibility: 'private',
  email: '',
  avatar_url: '',
  website: '',
  location: '',
};
export const RITA = { id: 2, login: 'rita', full_name: 'Rita Reader', email: 'rita@example.com' };
export const OWNERS_TEAM = {
  id: 100,
  name: 'Owners',
  description: '',
  permission: 'owner',
  type: 'general',
  units: null,
  organization: ORG,
  role_ids: [],
};
export const DEVS = {
  id: 101,
  name: 'devs',
  description: 'Developers',
  permission: 'read',
  type: 'general',
  units: null,
  organization: ORG,
  role_ids: [7],
};
export const AUDITOR = {
  id: 7,
  name: 'auditor',
  description: 'Reads contracts',
  permissions: [{ namespace: 'contract_mgmt', action: 'view_contracts' }],
  team_ids: [101],
  updated_at: '2026-01-01T00:00:00Z',
};

/** What an owner holds on the organization (docs/permissions.md), and what a plain member holds. */
export const OWNER_HOLDS = [
  'owner',
  'member',
  'access',
  'manage_owners',
  'edit',
  'delete',
  'admin',
  'create_role',
  'view_role',
  'edit_role',
  'delete_role',
  'create_team',
  'list_team',
  'view_team',
  'edit_team',
  'delete_team',
  'add_team_member',
  'remove_team_member',
  'list_bus_token',
  'revoke_bus_token',
  'list_access_token',
  'delete_access_token',
  'view_avatar',
  'update_avatar',
  'delete_avatar',
  'view_contracts_mgmt',
];
export const MEMBER_HOLDS = ['member', 'access', 'view_role', 'list_team', 'view_team', 'view_avatar'];

const list =
  (items: unknown[]): Answer =>
  () => [200, items];

/** The answers every screen of `acme` needs, as `holds` on the organization (and its teams) allows. */
export function acme(holds: string[], user: object = OWNER): Record<string, Answer> {
  const allowed = (objectType: string, objectID: number) => [200, { objectType, objectID, allowedPermissions: holds }] as Answer;
  return {
    'GET /user': [200, user],
    'GET /orgs/acme': [200, ORG],
    'GET /orgs/acme/members': list([OWNER, RITA]),
    'GET /orgs/acme/public_members': list([OWNER]),
    'GET /orgs/acme/teams': list([OWNERS_TEAM, DEVS]),
    'GET /authz/roles': [200, [AUDITOR]],
    'GET /authz/roles/available_permissions': [
      200,
      { permissions: [{ namespace: 'contract_mgmt', action: 'view_contracts', description: 'View contracts' }] },
    ],
    'GET /authz/roles/7/principals': [
      200,
      [
        { type: 'team', id: 101, name: 'devs' },
        { type: 'user', id: 2, name: 'rita', teams: [101] },
      ],
    ],
    'GET /teams/100/members': list([OWNER]),
    'GET /teams/101/members': list([RITA]),
    'GET /teams/101': [200, DEVS],
    'GET /authz/objects/organization/10/allowed-permissions': allowed('organization', 10),
    // On a team an owner holds every relation, a plain member only reads it.
    'GET /authz/objects/team/101/allowed-permissions': allowed('team', 101),
  };
}
