import type { authzV1 } from '@platform/proto';
import type { AuthzEngine, CheckRequest, Tuple, TupleFilter, TypeSystem } from './engine';
import type { ListOptions, ListUsersRequest, WriteOptions } from './engine/types';
import { Expansion } from './expand';
import { permissionCatalog, resolvePermission, SITE_OBJECT } from './permissions';
import { RelationNames } from './relation-names';
import { WhoHasAccess, type PermissionAccess } from './who-has-access';

/**
 * Authorization questions and the relationship tuples behind them (AuthzService): checks as the engine
 * answers them, the spec's permission names resolved to relations of the model, and the permission catalog.
 * A question's relation may be a relation of the model or a permission name the catalog shows (RelationNames):
 * `view_contracts` on an organization is asked as `view_contracts_mgmt`.
 */
export class Authorization {
  private readonly names: RelationNames;

  constructor(
    private readonly engine: AuthzEngine,
    private readonly model: TypeSystem,
  ) {
    this.names = new RelationNames(model);
  }

  /** The question with its relation read as the model's (contextual tuples are the model's own tuples, as they are). */
  private asked(request: CheckRequest): CheckRequest {
    return { ...request, relation: this.names.relationOn(request.object, request.relation) };
  }

  async check(request: CheckRequest): Promise<boolean> {
    return this.engine.check(this.asked(request));
  }

  async batchCheck(requests: CheckRequest[]): Promise<boolean[]> {
    return this.engine.batchCheck(requests.map((r) => this.asked(r)));
  }

  /** Whether a user holds a permission of the spec (`edit:org`) on an object; site permissions ignore the id. */
  checkPermission(userId: number, permission: string, objectId: number): Promise<boolean> {
    const target = resolvePermission(permission);
    const object = target.objectType === 'site' ? SITE_OBJECT : `${target.objectType}:${objectId}`;
    return this.engine.check({ user: `user:${userId}`, relation: target.relation, object });
  }

  /**
   * Which of the relations (every relation of the object's type when none are named) the user holds, named as they
   * were asked (a permission name answers as itself).
   */
  async listRelations(user: string, object: string, relations: string[]): Promise<string[]> {
    if (!relations.length) return this.engine.listRelations(user, object, this.model.relationsOf(object.split(':')[0]));
    const asked = relations.map((name) => ({ name, relation: this.names.relationOn(object, name) }));
    const held = new Set(await this.engine.listRelations(user, object, [...new Set(asked.map((a) => a.relation))]));
    return asked.filter((a) => held.has(a.relation)).map((a) => a.name);
  }

  async listObjects(user: string, relation: string, type: string, options?: ListOptions): Promise<string[]> {
    return this.engine.listObjects(user, this.names.relation(type, relation), type, options);
  }

  async listUsers(request: ListUsersRequest): Promise<string[]> {
    return this.engine.listUsers({ ...request, relation: this.names.relationOn(request.object, request.relation) });
  }

  /** OpenFGA's Expand: the userset tree of the relation on the object, one level deep (expand.ts). */
  async expand(object: string, relation: string, contextualTuples: Tuple[] = []): Promise<authzV1.UsersetTree> {
    return new Expansion(this.engine, this.model).expand(object, this.names.relationOn(object, relation), contextualTuples);
  }

  /**
   * Who holds each permission of an organization, a contract or a cluster, and the paths that grant it, at authz's
   * time. The answer reads every tuple reaching the object and lists the users of each relation; its reader keeps it
   * (authz's read model, @platform/authz-client), as it keeps checks.
   */
  whoHasAccess(object: string, owner?: string): Promise<PermissionAccess[]> {
    return new WhoHasAccess(this.engine, this.model).of(object, { current_time: new Date().toISOString() }, owner);
  }

  write(writes: Tuple[], deletes: Tuple[], opts?: WriteOptions): Promise<void> {
    return this.engine.write(writes, deletes, opts);
  }

  readTuples(filter: TupleFilter): Promise<Tuple[]> {
    return this.engine.readTuples(filter);
  }

  /** What a custom role may carry (GET /authz/roles/available_permissions). */
  catalog() {
    return permissionCatalog();
  }
}
