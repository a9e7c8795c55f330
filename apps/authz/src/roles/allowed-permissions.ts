import { InputError, quote } from '@platform/errors';
import { checkLengths, TEXT_LIMITS } from '@platform/service-kit';
import type { AuthzEngine, TypeSystem } from '../engine';

/** The spec's objectType values of allowed-permissions; each is the model type of the same name. */
export const OBJECT_TYPES = ['user', 'organization', 'team', 'cluster', 'contract', 'robot_ac', 'token'] as const;
export type AllowedObjectType = (typeof OBJECT_TYPES)[number];

/** Most objects one batch may name. */
export const MAX_OBJECTS_PER_REQUEST = 100;

export interface ObjectRef {
  objectType: string;
  objectId: number;
}

export interface ObjectPermissions {
  objectType: string;
  objectId: number;
  allowedPermissions: string[];
}

/**
 * The relations of a type that allowed-permissions reports: every relation of the model type a user can
 * hold. Left out are the pure links to other objects (`team#organization`, `organization#site`,
 * `role#organization`): they are directly assignable only, and only to non-user objects.
 */
export function reportedRelations(model: TypeSystem, type: string): string[] {
  return model.relationsOf(type).filter((relation) => {
    const rewrite = model.rewrite(type, relation);
    if (!rewrite?.this) return true;
    return model.directTypes(type, relation).some((r) => r.type === 'user' || !!r.relation);
  });
}

/** What the requester holds on each object (allowed-permissions), from the engine. */
export class AllowedPermissions {
  private readonly relations = new Map<string, string[]>();

  constructor(
    private readonly engine: AuthzEngine,
    model: TypeSystem,
  ) {
    for (const type of OBJECT_TYPES) this.relations.set(type, reportedRelations(model, type));
  }

  /** The relations each object's type defines that the user holds, in model order; answers in request order. */
  async of(userId: number, objects: ObjectRef[]): Promise<ObjectPermissions[]> {
    if (!Number.isSafeInteger(userId) || userId <= 0) throw new InputError('user id must be a positive integer');
    if (objects.length > MAX_OBJECTS_PER_REQUEST) {
      throw new InputError(`at most ${MAX_OBJECTS_PER_REQUEST} objects per request; ${objects.length} were given`);
    }
    objects.forEach((o, i) => this.validate(userId, o, objects.length > 1 ? `[${i}]` : ''));
    const checks = objects.flatMap((o) =>
      this.relations.get(o.objectType)!.map((relation) => ({ user: `user:${userId}`, relation, object: `${o.objectType}:${o.objectId}` })),
    );
    const held = await this.engine.batchCheck(checks);
    let next = 0;
    return objects.map((o) => ({
      objectType: o.objectType,
      objectId: o.objectId,
      allowedPermissions: this.relations.get(o.objectType)!.filter(() => held[next++]),
    }));
  }

  private validate(userId: number, o: ObjectRef, at: string): void {
    checkLengths([[`objectType${at}`, o.objectType, TEXT_LIMITS.objectType]]);
    if (!(OBJECT_TYPES as readonly string[]).includes(o.objectType)) {
      throw new InputError(`objectType${at} ${quote(o.objectType)} is invalid; use one of ${OBJECT_TYPES.join(', ')}`, [
        { field: `objectType${at}`, description: 'invalid object type' },
      ]);
    }
    if (!Number.isSafeInteger(o.objectId) || o.objectId <= 0) {
      throw new InputError(`objectID${at} must be a positive integer`, [{ field: `objectID${at}`, description: 'invalid object id' }]);
    }
    if (o.objectType === 'user' && o.objectId !== userId) {
      throw new InputError(`objectID${at}: a user object must be the requester's own id`, [
        { field: `objectID${at}`, description: 'must be your own user id' },
      ]);
    }
  }
}
