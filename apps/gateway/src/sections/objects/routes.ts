import { z } from 'zod';
import { NotFoundError } from '@platform/errors';
import { isValidKey, openObjectStorage, type ObjectStorage } from '@platform/object-storage';
import type { Calls } from '../../backends';
import type { GatewayConfig } from '../../config';
import { sectionRoutes } from '../../route';
import { OBJECTS_PATH, signerFor } from '../../signed-objects';

const route = sectionRoutes({ tag: 'Objects', backend: 'orgs-teams' });

// Signed objects (beyond the spec): the bytes behind the time-limited URLs the API hands out (avatars).
// Decisions: docs/object-storage.md.

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

type Owner = (backends: Calls, key: string, config: GatewayConfig) => Promise<{ body: Uint8Array; contentType: string }>;

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

/** What the signature of the URL says: ok, expired, or not valid. */
async function verdictOf(
  { params, query }: { params: { key: string }; query: { expires?: string; signature?: string } },
  { config }: { config: GatewayConfig },
) {
  return (await signerFor(config)).verify(params.key, query.expires, query.signature);
}

export const objectRoutes = [
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${OBJECTS_PATH}/*key`,
    summary: 'A stored object (avatar image, contract document) behind a signed URL; 403 for a missing, forged or expired signature',
    auth: 'public',
    // `*key` matches the segments of the key; they are joined back with "/".
    params: z.object({ key: z.union([z.string(), z.array(z.string())]).transform((k) => (Array.isArray(k) ? k.join('/') : k)) }),
    query: z.object({ expires: z.string().optional(), signature: z.string().optional() }),
    checks: [
      {
        check: 'the URL has not expired',
        holds: async (input, ctx) => (await verdictOf(input, ctx)) !== 'expired',
        denied: 'the object URL has expired',
      },
      {
        check: 'a valid signature of the key',
        holds: async (input, ctx) => (await verdictOf(input, ctx)) === 'ok',
        denied: 'the object URL is not validly signed',
      },
    ],
    response: { status: 200, schema: z.instanceof(Buffer).meta({ type: 'string', format: 'binary' }), contentType: '*/*' },
    async handle({ params, query }, { backends, config }) {
      const key = params.key;
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
