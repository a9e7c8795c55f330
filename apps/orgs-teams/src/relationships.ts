import { authzV1 } from '@platform/proto';
import { createClient, type CallOptions, type PromiseClient } from '@platform/service-kit';

/** A relationship in OpenFGA string form. */
export interface Tuple {
  user: string;
  relation: string;
  object: string;
}

/** A tuple as one string, to compare tuples by value. */
export const tupleKey = (t: Tuple) => `${t.user} ${t.relation} ${t.object}`;

/** orgs-teams' view of the authz service: the relationship writes its data changes need. */
export class Relationships {
  private readonly client: PromiseClient<typeof authzV1.AuthzServiceService>;

  constructor(address: string) {
    this.client = createClient(authzV1.AuthzServiceService, address, { name: 'authz' });
  }

  /**
   * Writes and deletes atomically, for the call given (a CallContext: its request id and deadline); throws
   * when authz refuses or cannot be reached. An idempotent write ignores tuples already as asked, so the
   * outbox relay can apply a change again.
   */
  async write(writes: Tuple[], deletes: Tuple[], call?: CallOptions, opts: { idempotent?: boolean } = {}): Promise<void> {
    await this.client.writeTuples({ writes, deletes, idempotent: opts.idempotent }, call);
  }

  close(): void {
    this.client.close();
  }
}
