import { createHash } from 'node:crypto';
import type { Database } from '@platform/db';
import type { authzV1 } from '@platform/proto';
import type { AuthorizationModel } from './engine';

/** Crockford's base 32, which ULIDs are written in. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID-shaped id made from a text (its SHA-256's first 128 bits in 26 characters, as a ULID's 128 bits are): the same
 * text always gives the same id, so the ids OpenFGA's SDKs are configured with survive restarts, replicas and restores.
 */
export function ulidOf(text: string): string {
  let n = BigInt(`0x${createHash('sha256').update(text).digest().subarray(0, 16).toString('hex')}`);
  let id = '';
  for (let i = 0; i < 26; i++) {
    id = CROCKFORD[Number(n & 31n)] + id;
    n >>= 5n;
  }
  return id;
}

/** The one store: the same id on every installation, so a team's configuration does not change with the platform's. */
export const STORE_ID = ulidOf('platformadmin store');
export const STORE_NAME = 'platform';

/**
 * The store and model the platform presents its relationships as to OpenFGA's SDKs (the gateway's `/openfga`): the one
 * store, made when authz's schema was (its first migration), and the model authz evaluates, whose id follows its
 * content, so it changes only when a release changes the model.
 */
export async function describeStore(db: Database, model: AuthorizationModel): Promise<authzV1.DescribeStoreResponse> {
  const first = (await db.table('knex_migrations').orderBy('id').first('migration_time')) as { migration_time?: Date | string } | undefined;
  const json = JSON.stringify(model);
  return {
    storeId: STORE_ID,
    storeName: STORE_NAME,
    createdAt: new Date(first?.migration_time ?? Date.now()).toISOString(),
    authorizationModelId: ulidOf(`platformadmin model ${json}`),
    authorizationModelJson: json,
  };
}
