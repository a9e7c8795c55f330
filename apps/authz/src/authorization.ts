import type { AuthzEngine, CheckRequest, Tuple, TupleFilter, TypeSystem } from './engine';
import type { ListOptions, ListUsersRequest, WriteOptions } from './engine/types';
import { permissionCatalog, resolvePermission, SITE_OBJECT } from './permissions';
import type { DecisionCache } from '@platform/bus';
import { WhoHasAccess, type PermissionAccess } from './who-has-access';

/** A who-has-access answer as kept: the permissions, and when the earliest time-bound grant it read ends. */
export interface KeptAccess {
  permissions: PermissionAccess[];
  endsAt?: number;
}

/**
 * Authorization questions and the relationship tuples behind them (AuthzService): checks as the engine
 * answers them, the spec's permission names resolved to relations of the model, and the permission catalog.
 */
export class Authorization {
  constructor(
    private readonly engine: AuthzEngine,
    private readonly model: TypeSystem,
    /** Who-has-access answers kept until a tuple changes (or a time-bound grant among them ends); none when absent. */
    private readonly accessKept?: DecisionCache<KeptAccess>,
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
   * Who holds each permission of an organization, a contract or a cluster, and the paths that grant it. The answer
   * reads every tuple reaching the object and lists the users of each relation, so it is kept (the console's access
   * screen asks again for each look) until any tuple changes, or the first time-bound grant it read ends.
   */
  async whoHasAccess(object: string): Promise<PermissionAccess[]> {
    const ask = async (): Promise<KeptAccess> => {
      const view = new WhoHasAccess(this.engine, this.model);
      return { permissions: await view.of(object, { current_time: new Date().toISOString() }), endsAt: view.endsAt };
    };
    const kept = this.accessKept
      ? await this.accessKept.through(object, ask, {
          ttlMs: (a) => (a.endsAt === undefined ? undefined : Math.max(0, a.endsAt - Date.now())),
        })
      : await ask();
    return kept.permissions;
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
