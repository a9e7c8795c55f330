import { z } from 'zod';
import { presignGetUrl } from '@platform/object-storage';
import type { contractsV1 } from '@platform/proto';
import { NotAllowedError, NotFoundError } from '@platform/errors';
import * as p from '../../params';
import type { EdgeContext, OrgRef, User } from '../../route';
import { signedObjectUrl } from '../../signed-objects';
import { clusterUuid } from '../../params';

/** What every contract route shares (docs/contracts.md). */

/** The account a request acts for: the `org` organization, or the caller's own (user) account. */
export interface Owner {
  id: number;
  login: string;
  type: 'organization' | 'user';
}

export function ownerOf(ctx: { caller: User; org: OrgRef | undefined }): Owner {
  return ctx.org
    ? { id: ctx.org.id, login: ctx.org.name, type: ctx.org.type ?? 'organization' }
    : { id: ctx.caller.id, login: ctx.caller.login, type: 'user' };
}

/** How long a document URL is valid. */
export const DOCUMENT_URL_SECONDS = 30 * 60;

/**
 * A URL that downloads the document stored under `path` without a token, valid 30 minutes: on S3 with static
 * credentials a presigned URL of the bucket (the bytes never pass through the gateway); otherwise (the embedded
 * default, or S3 through the SDK's credential chain) a URL of ours signed with the object signing key, which
 * the gateway serves from the object storage.
 */
export async function documentUrl(ctx: EdgeContext, path: string): Promise<string> {
  const c = ctx.config;
  if (c.OBJECT_STORAGE_URL && c.OBJECT_STORAGE_ACCESS_KEY_ID && c.OBJECT_STORAGE_SECRET_ACCESS_KEY) {
    const opts = {
      endpoint: c.OBJECT_STORAGE_URL,
      bucket: c.OBJECT_STORAGE_BUCKET,
      region: c.OBJECT_STORAGE_REGION,
      accessKeyId: c.OBJECT_STORAGE_ACCESS_KEY_ID,
      secretAccessKey: c.OBJECT_STORAGE_SECRET_ACCESS_KEY,
      forcePathStyle: c.OBJECT_STORAGE_FORCE_PATH_STYLE,
    };
    return presignGetUrl(opts, path, DOCUMENT_URL_SECONDS);
  }
  return signedObjectUrl(ctx, path, Math.floor(Date.now() / 1000) + DOCUMENT_URL_SECONDS);
}

/**
 * For the user rows whose spec answers 403 for a contract that is not the account's ("not found or denied"):
 * contracts-licensing's NotFound becomes 403, so another account's contract is never told apart from a missing one.
 */
export async function deniedWhenMissing<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof NotFoundError) throw new NotAllowedError('no such contract of this account');
    throw err;
  }
}

export const ContractId = z.object({ id: p.id });
export const ContractClusterId = z.object({ id: p.id, ccID: p.id });
export const ClusterId = z.object({ clusterID: clusterUuid });

/** `contract`: a contract id, 0 or absent meaning any active contract of the owner. */
export const contractQuery = z
  .string({ error: 'must be a contract id' })
  .regex(/^\d{1,18}$/, 'must be a contract id')
  .transform(Number)
  .optional()
  .meta({ type: 'integer', format: 'int64' });

/** A ListContracts request for an owner (0: every owner), with the filters given. */
export const listRequest = (
  ownerId: number,
  filters: Partial<contractsV1.ListContractsRequest> = {},
): contractsV1.ListContractsRequest => ({
  ownerId,
  activeOnly: false,
  offlineOnly: false,
  boundTo: '',
  notBoundTo: '',
  ...filters,
});
