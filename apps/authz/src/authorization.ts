import type { AuthzEngine, CheckRequest, Tuple, TupleFilter, TypeSystem } from './engine';
import type { ListOptions, ListUsersRequest, WriteOptions } from './engine/types';
import { permissionCatalog, resolvePermission, SITE_OBJECT } from './permissions';
import { WhoHasAccess, type PermissionAccess } from './who-has-access';

/**
 * Authorization questions and the relationship tuples behind them (AuthzService): checks as the engine
 * answers them, the spec's permission names resolved to relations of the model, and the permission catalog.
 */
export class Authorization {
  constructor(
    private readonly engine: AuthzEngine,
    private readonly model: TypeSystem,
  ) {}

  check(request: CheckRequest): Promise<boolean> {
    return this.engine.check(request);
  }

  batchCheck(requests: CheckRequest[]): Promise<boolean[]> {
    return this.engine.batchCheck(requests);
  }

  /** Whether a user holds a permission of the spec (`edit:org`) on an object; site permissions ignore the id. */
  checkPermission(userId: number, permission: string, objectId: number): Promise<boolean> {
    const target = resolvePermission(permission);
    const object = target.objectType === 'site' ? SITE_OBJECT : `${target.objectType}:${objectId}`;
    return this.engine.check({ user: `user:${userId}`, relation: target.relation, object });
  }

  /** Which of the relations (every relation of the object's type when none are named) the user holds. */
  listRelations(user: string, object: string, relations: string[]): Promise<string[]> {
    return this.engine.listRelations(user, object, relations.length ? relations : this.model.relationsOf(object.split(':')[0]));
  }

  listObjects(user: string, relation: string, type: string, options?: ListOptions): Promise<string[]> {
    return this.engine.listObjects(user, relation, type, options);
  }

  listUsers(request: ListUsersRequest): Promise<string[]> {
    return this.engine.listUsers(request);
  }

  /**
   * Who holds each permission of an organization, a contract or a cluster, and the paths that grant it, at authz's
   * time. The answer reads every tuple reaching the object and lists the users of each relation; its reader keeps it
   * (authz's read model, @platform/authz-client), as it keeps checks.
   */
  whoHasAccess(object: string): Promise<PermissionAccess[]> {
    return new WhoHasAccess(this.engine, this.model).of(object, { current_time: new Date().toISOString() });
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
