import { accessName } from './access-names';
import { TypeSystem } from './engine/model';

describe('the names who-has-access gives relations', () => {
  it('names a relation by the permission checked as it, or granted as it by a custom role, in the catalog’s words', () => {
    expect(accessName('organization', 'edit')).toEqual({ permission: 'edit:org', description: 'Edit the organization' });
    expect(accessName('organization', 'view_role')).toEqual({ permission: 'view:role', description: 'View custom roles' });
    expect(accessName('organization', 'add_team_member')).toEqual({ permission: 'add:team', description: 'Add a user to a team' });
    expect(accessName('organization', 'issue_license')).toEqual({
      permission: 'issue-license:cluster',
      description: 'Issue licenses for clusters',
    });
    expect(accessName('cluster', 'manage')).toEqual({
      permission: 'manage',
      description: 'Manage the cluster: its cluster sets, feature sets and namespaces',
    });
  });

  it('says in words what every relation of an organization, a contract and a cluster lets one do', () => {
    const model = TypeSystem.fromFile();
    const structural = new Set(['site', 'organization', 'parent']);
    const unnamed = (['organization', 'contract', 'cluster'] as const).flatMap((type) =>
      model
        .relationsOf(type)
        .filter((r) => !structural.has(r) && !accessName(type, r).description)
        .map((r) => `${type}#${r}`),
    );
    expect(unnamed).toEqual([]);
  });
});
