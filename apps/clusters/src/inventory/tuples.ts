import type { EffectHandler } from '@platform/db';
import { authzV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';

/** A relationship in OpenFGA string form. */
export interface Tuple {
  user: string;
  relation: string;
  object: string;
}

/** Tuples to write and delete once a change committed. */
export interface TupleChange {
  writes: Tuple[];
  deletes: Tuple[];
}

export const TUPLES_EFFECT = 'authz.tuples';

/**
 * The authz object of a cluster: `cluster:<uid>`. The UID (a UUID) is what member clusters, licenses and the
 * metrics-proxy hook know a cluster by, and it never changes, unlike the name.
 */
export const clusterObject = (uid: string) => `cluster:${uid}`;

/** The tuple making an account the owner of a cluster: `<organization|user>:<id> owner cluster:<uid>`. */
export const ownerTuple = (ownerType: string, ownerId: number, uid: string): Tuple => ({
  user: `${ownerType}:${ownerId}`,
  relation: 'owner',
  object: clusterObject(uid),
});

/** The clusters service's client of authz: the tuple writes its outbox effects make. */
export class Relationships {
  private readonly client: PromiseClient<typeof authzV1.AuthzServiceService>;

  constructor(address: string) {
    this.client = createClient(authzV1.AuthzServiceService, address, { name: 'authz' });
  }

  /**
   * The outbox handler of tuple changes: an idempotent write (tuples already as asked are left alone), so the
   * relay may apply it again; undone by the opposite change.
   */
  effect(): EffectHandler<TupleChange> {
    return {
      apply: async (c, call) => void (await this.client.writeTuples({ writes: c.writes, deletes: c.deletes, idempotent: true }, call)),
      invert: (c) => ({ writes: c.deletes, deletes: c.writes }),
    };
  }

  close(): void {
    this.client.close();
  }
}
