import { PERMISSIONS, type ObjectType } from './permissions';

/** A relation of an object as who-has-access shows it: a permission name and what it lets one do. */
export interface AccessName {
  /** The catalog's name (`edit:org`, `view:role`), or the relation's when no permission of the catalog is it. */
  permission: string;
  /** The catalog's description, or the model's own relation said in words; empty when neither says anything. */
  description: string;
}

/**
 * The model's relations that no permission of the catalog is checked or granted as: an object's owner, a hub's
 * `manage`, a contract's or cluster's `view`. Said in words here so the view names every relation it lists.
 */
const MODEL_RELATIONS: Record<string, string> = {
  'organization#owner': 'Own the organization (its Owners team)',
  'contract#owner': 'Own the contract (the account it is for)',
  'contract#view': 'View the contract and its audit events',
  'contract#add_cluster': 'Bind clusters to the contract',
  'contract#issue_license': 'Issue licenses under the contract',
  'cluster#owner': 'Own the cluster (the account that enrolled it)',
  'cluster#manage': 'Manage the cluster: its cluster sets, feature sets and namespaces',
  'cluster#view': 'View the cluster',
};

/**
 * How who-has-access names a relation of an object of `type`, in the catalog's words (docs/permissions.md): the
 * permission checked as that relation on the type (`edit` on an organization is `edit:org`); on an organization, the
 * first permission of the catalog a custom role grants as it (`view_role` is `view:role`, "View custom roles"; a
 * relation several permissions are granted as, such as `add_team_member` for `add:team` and `add:team-member`, is
 * named by the first); else the model's relation, in words where it has some.
 */
export function accessName(type: ObjectType, relation: string): AccessName {
  const checked = PERMISSIONS.find((p) => p.objectType === type && p.relation === relation);
  const granted = type === 'organization' ? PERMISSIONS.find((p) => p.assignable && p.grant === relation) : undefined;
  const found = checked ?? granted;
  if (found) return { permission: found.name, description: found.description };
  return { permission: relation, description: MODEL_RELATIONS[`${type}#${relation}`] ?? '' };
}
