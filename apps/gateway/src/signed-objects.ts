import { loadSigningKey, stableExpiry, UrlSigner } from '@platform/object-storage';
import { publicLink, publicUrlOf } from '@platform/service-kit';
import type { GatewayConfig } from './config';
import type { EdgeContext } from './route';

// Time-limited URLs of stored objects (avatars, contract documents), made by every section that hands one out and
// checked by the objects route (sections/objects/routes.ts). Decisions: docs/object-storage.md.

/** Where signed objects are served, below /api/v1. */
export const OBJECTS_PATH = '/objects';
/** Lifetime window of an object URL: valid for one to two windows, and the same URL within a window. */
export const OBJECT_URL_WINDOW_SECONDS = 3600;

// One signer per configuration, created on first use: a process that never signs writes no key file.
const signers = new WeakMap<GatewayConfig, Promise<UrlSigner>>();

/** The signer of this configuration's object URLs (the objects route checks signatures with it too). */
export function signerFor(config: GatewayConfig): Promise<UrlSigner> {
  let signer = signers.get(config);
  if (!signer) {
    signer = loadSigningKey(config).then((key) => new UrlSigner(key));
    signer.catch(() => signers.delete(config));
    signers.set(config, signer);
  }
  return signer;
}

/**
 * An absolute, time-limited URL that serves the object under key:
 * `<origin>/api/v1/objects/<key>?expires=<unix>&signature=<base64url HMAC-SHA256(key "\n" expires)>`.
 */
export async function signedObjectUrl(ctx: EdgeContext, key: string, expires = stableExpiry(OBJECT_URL_WINDOW_SECONDS)): Promise<string> {
  const signer = await signerFor(ctx.config);
  return publicLink(publicUrlOf(ctx.config), `/api/v1${OBJECTS_PATH}/${key}?${signer.query(key, expires)}`);
}
