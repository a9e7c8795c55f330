import { ConflictError, InternalError, NotFoundError, TooManyRequestsError, UnavailableError } from '@platform/errors';
import type { SubscriberDirectory } from './subscribers';
import { isUuidAnyCase } from '@platform/proto';

/** OrgClaimableCheckResp. */
export interface OrgClaimableCheckResp {
  isClaimable: boolean;
  claimID: string;
}


/**
 * The claimable check of the webhook listener: from the claims orgs-teams keeps, or, when MARKETPLACE_CENTRAL_URL names a
 * central marketplace server, from that server's same route. 404 unknown, 409 claimed, 429 with Retry-After
 * while the claim's retry backoff runs (200 when already flagged claimable).
 */
export function claimableCheck(directory: SubscriberDirectory, centralUrl?: string, timeoutMs = 10_000) {
  return async (claimId: string): Promise<OrgClaimableCheckResp> => {
    if (!isUuidAnyCase(claimId)) throw new NotFoundError(`claim ${claimId.slice(0, 64)} does not exist`);
    if (!centralUrl) {
      const check = await directory.checkClaim(claimId);
      return { isClaimable: check.isClaimable, claimID: check.claimId };
    }
    return askCentral(centralUrl, claimId, timeoutMs);
  };
}

/** Asks the central server and answers as it did: its 200 body, or its 404/409/429 (with Retry-After) as ours. */
async function askCentral(centralUrl: string, claimId: string, timeoutMs: number): Promise<OrgClaimableCheckResp> {
  const url = `${centralUrl.replace(/\/+$/, '')}/marketplaces/standalone-organizations/${claimId}/claimable`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  } catch {
    throw new UnavailableError('the central marketplace server is unavailable');
  }
  const body = (await res.json().catch(() => undefined)) as { message?: unknown; isClaimable?: unknown; claimID?: unknown } | undefined;
  const message = typeof body?.message === 'string' ? body.message.slice(0, 500) : undefined;
  switch (res.status) {
    case 200:
      if (typeof body?.isClaimable !== 'boolean') break;
      return { isClaimable: body.isClaimable, claimID: typeof body.claimID === 'string' ? body.claimID : claimId };
    case 404:
      throw new NotFoundError(message ?? `claim ${claimId} does not exist`);
    case 409:
      throw new ConflictError(message ?? `claim ${claimId} has already been claimed`);
    case 429: {
      const retry = Number(res.headers.get('retry-after'));
      throw new TooManyRequestsError(
        message ?? `claim ${claimId} is not claimable yet; retry later`,
        Number.isFinite(retry) && retry > 0 ? retry : undefined,
      );
    }
  }
  throw new InternalError(`the central marketplace server answered ${res.status} to a claimable check`);
}
