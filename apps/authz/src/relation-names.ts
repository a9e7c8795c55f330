import { InputError } from '@platform/errors';
import type { TypeSystem } from './engine';
import { PERMISSIONS, type Permission } from './permissions';

/** How a name other than a relation of the model is read on objects of one type. */
export type NameOnType = { relation: string; permission: Permission } | { ambiguous: Permission[] };

/**
 * The relation names a question may use: every relation of the model, and the permission names the console and the
 * permission catalog show, read as the relation they are checked as on that object type (permissions.ts, the table
 * the catalog is made from). On an object of type T, a name is:
 *
 * 1. a relation of T in the model (`view_contracts_mgmt` on an organization, `view_contracts` on the site): as it is;
 * 2. a permission's full name (`view_contracts:contract_mgmt`, `Organization_SiteAdminCanViewClientOrg`) checked on
 *    T: its relation;
 * 3. the catalog's action alone (`view_contracts`) when exactly one permission checked on T has that action: its
 *    relation. When several do (`list` on an organization: `list:team`, `list:access-token`, ...) the question is an
 *    invalid argument naming them.
 *
 * Anything else is left for the engine, which refuses what the model does not define.
 */
export class RelationNames {
  /** Per object type: names that are not relations of the type, read as a relation (or ambiguous). */
  private readonly byType = new Map<string, Map<string, NameOnType>>();
  /** Every permission by its full name, to say where one asked on the wrong type is checked. */
  private readonly byName = new Map(PERMISSIONS.map((p) => [p.name, p]));

  constructor(model: TypeSystem) {
    const actions = new Map<string, Map<string, Permission[]>>();
    for (const p of PERMISSIONS) {
      // A permission whose relation the model lacks is left out (catalog-doc.test.ts keeps the two in step).
      if (!model.rewrite(p.objectType, p.relation)) continue;
      const names = this.byType.get(p.objectType) ?? new Map<string, NameOnType>();
      this.byType.set(p.objectType, names);
      if (!model.rewrite(p.objectType, p.name)) names.set(p.name, { relation: p.relation, permission: p });
      const byAction = actions.get(p.objectType) ?? new Map<string, Permission[]>();
      actions.set(p.objectType, byAction);
      byAction.set(p.action, [...(byAction.get(p.action) ?? []), p]);
    }
    for (const [type, byAction] of actions) {
      const names = this.byType.get(type)!;
      for (const [action, permissions] of byAction) {
        // A relation of the model, or a permission's full name, means what it means already.
        if (model.rewrite(type, action) || names.has(action)) continue;
        const relations = new Set(permissions.map((p) => p.relation));
        names.set(
          action,
          relations.size === 1 ? { relation: permissions[0].relation, permission: permissions[0] } : { ambiguous: permissions },
        );
      }
    }
  }

  /** The relation `name` stands for on objects of `objectType`; a name it does not know is answered as it is. */
  relation(objectType: string, name: string): string {
    const read = this.byType.get(objectType)?.get(name);
    const elsewhere = this.byName.get(name);
    if (!read && elsewhere && elsewhere.objectType !== objectType) {
      throw new InputError(`permission '${name}' is checked on ${elsewhere.objectType} objects, not on ${objectType}`);
    }
    if (!read) return name;
    if ('relation' in read) return read.relation;
    const choices = read.ambiguous.map((p) => `'${p.name}'`).join(', ');
    throw new InputError(`relation '${name}' is ambiguous on type '${objectType}': name the permission, one of ${choices}`);
  }

  /** The relation `name` stands for on `object` (`type:id`). */
  relationOn(object: string, name: string): string {
    return this.relation(object.slice(0, Math.max(0, object.indexOf(':'))), name);
  }

  /** Every name read on a type other than as a relation of the model, sorted: for the documentation. */
  namesOn(objectType: string): [string, NameOnType][] {
    return [...(this.byType.get(objectType) ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** The object types names are read on, in the model's order. */
  types(): string[] {
    return [...this.byType.keys()];
  }
}
