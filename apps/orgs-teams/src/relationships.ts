import { authzV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';

/** A relationship in OpenFGA string form. */
export interface Tuple {
  user: string;
  relation: string;
  object: string;
}

/** orgs-teams' view of the authz service: the relationship writes its data changes need. */
export class Relationships {
  private readonly client: PromiseClient<typeof authzV1.AuthzServiceService>;

  constructor(address: string) {
    this.client = createClient(authzV1.AuthzServiceService, address, { name: 'authz' });
  }

  /** Writes and deletes atomically; throws when authz refuses or cannot be reached. */
  async write(writes: Tuple[], deletes: Tuple[], requestId?: string): Promise<void> {
    await this.client.writeTuples({ writes, deletes }, { requestId });
  }

  close(): void {
    this.client.close();
  }
}
