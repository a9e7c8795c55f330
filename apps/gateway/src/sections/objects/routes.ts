import { z } from 'zod';
import { NotAllowedError, NotFoundError } from '@platform/errors';
import { isValidKey, loadSigningKey, openObjectStorage, stableExpiry, UrlSigner, type ObjectStorage } from '@platform/object-storage';
import type { Backends } from '../../backends';
import type { GatewayConfig } from '../../config';
import { sectionRoutes, type EdgeContext } from '../../route';

const route = sectionRoutes({ tag: 'Objects', backend: 'orgs-teams' });

// Signed objects (beyond the spec): the bytes behind the time-limited URLs the API hands out (avatars).
// Decisions: docs/object-storage.md.

/** Where signed objects are served, below /api/v1. */
export const OBJECTS_PATH = '/objects';
/** Lifetime window of an object URL: valid for one to two windows, and the same URL within a window. */
export const OBJECT_URL_WINDOW_SECONDS = 3600;

// One signer per configuration, created on first use: a process that never signs writes no key file.
const signers = new WeakMap<GatewayConfig, Promise<UrlSigner>>();

function signerFor(config: GatewayConfig): Promise<UrlSigner> {
  let signer = signers.get(config);
  if (!signer) {
    signer = loadSigningKey(config).then((key) => new UrlSigner(key));
    signer.catch(() => signers.delete(config));
    signers.set(config, signer);
  }
  return signer;
}

// The object storage, opened on first use per configuration, for the keys the gateway reads itself.
const storages = new WeakMap<GatewayConfig, ObjectStorage>();

function storageFor(config: GatewayConfig): ObjectStorage {
  let storage = storages.get(config);
  if (!storage) {
    storage = openObjectStorage(config);
    storages.set(config, storage);
  }
  return storage;
}

type Owner = (backends: Backends, key: string, config: GatewayConfig) => Promise<{ body: Uint8Array; contentType: string }>;

/**
 * Who answers for the objects under each key prefix: orgs-teams through its RPC for avatars (it renders the
 * default ones); contract documents (written by contracts-licensing through the same object storage) are read
 * from the storage directly, since they are stored as uploaded.
 */
const OWNERS: Record<string, Owner> = {
  avatars: (backends, key) => backends.orgsTeams.avatars.getAvatarObject({ key }),
  contracts: async (_backends, key, config) => {
    const object = await storageFor(config).get(key);
    if (!object) throw new NotFoundError('no such object');
    return object;
  },
};

/** Objects served as downloads (Content-Disposition: attachment) rather than shown inline. */
const DOWNLOADS = new Set(['contracts']);

/**
 * An absolute, time-limited URL that serves the object under key:
 * `<origin>/api/v1/objects/<key>?expires=<unix>&signature=<base64url HMAC-SHA256(key "\n" expires)>`.
 */
export async function signedObjectUrl(ctx: EdgeContext, key: string, expires = stableExpiry(OBJECT_URL_WINDOW_SECONDS)): Promise<string> {
  const signer = await signerFor(ctx.config);
  return `${ctx.req.protocol}://${ctx.req.get('host')}/api/v1${OBJECTS_PATH}/${key}?${signer.query(key, expires)}`;
}

export const objectRoutes = [
  route({
    method: 'get',
    path: `${OBJECTS_PATH}/*key`,
    summary: 'A stored object (avatar image, contract document) behind a signed URL; 403 for a missing, forged or expired signature',
    auth: 'public',
    // `*key` matches the segments of the key; they are joined back with "/".
    params: z.object({ key: z.union([z.string(), z.array(z.string())]).transform((k) => (Array.isArray(k) ? k.join('/') : k)) }),
    query: z.object({ expires: z.string().optional(), signature: z.string().optional() }),
    handlerChecks: ['a valid, unexpired signature of the key (403 otherwise)'],
    response: { status: 200, schema: z.instanceof(Buffer).meta({ type: 'string', format: 'binary' }), contentType: '*/*' },
    async handle({ params, query }, { backends, config }) {
      const key = params.key;
      const signer = await signerFor(config);
      const verdict = signer.verify(key, query.expires, query.signature);
      if (verdict === 'expired') throw new NotAllowedError('the object URL has expired');
      if (verdict !== 'ok') throw new NotAllowedError('the object URL is not validly signed');
      const prefix = key.split('/')[0];
      const owner = OWNERS[prefix];
      if (!owner || !isValidKey(key)) throw new NotFoundError('no such object');
      const object = await owner(backends, key, config);
      const maxAge = Math.max(0, Number(query.expires) - Math.floor(Date.now() / 1000));
      return {
        body: Buffer.from(object.body),
        headers: {
          'Content-Type': object.contentType,
          'Cache-Control': `private, max-age=${maxAge}`,
          'X-Content-Type-Options': 'nosniff',
          'Content-Security-Policy': "default-src 'none'; sandbox",
          ...(DOWNLOADS.has(prefix) && { 'Content-Disposition': `attachment; filename="${key.split('/').at(-1)}"` }),
        },
      };
    },
  }),
];
