import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '@platform/service-kit';
import { isValidKey, objectStorageEnv, openObjectStorage, type ObjectStorage, type ObjectStorageConfig } from '@platform/object-storage';

/**
 * The object store (contract documents, avatars, installer archives) through the platform's own library, so an
 * archive made from files restores into S3 and the other way round. Each object is an entry `objects/<key>` holding
 * `<content type>\n<bytes>`.
 */
export interface ObjectStore {
  storage: ObjectStorage;
  where: string;
  /** Every key, sorted. */
  keys(): Promise<string[]>;
  /** Whether it holds any object (a restore target must not). */
  isEmpty(): Promise<boolean>;
  close(): void;
}

export function openObjectStore(env: NodeJS.ProcessEnv, dataDir: string): ObjectStore {
  const config: ObjectStorageConfig = { ...loadConfig(objectStorageEnv, env), DATA_DIR: dataDir };
  const storage = openObjectStorage(config);
  if (!config.OBJECT_STORAGE_URL) {
    const root = path.join(dataDir, 'objects');
    const keys = async () => walk(root, '').sort();
    return { storage, where: path.resolve(root), keys, isEmpty: async () => (await keys()).length === 0, close() {} };
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk: typeof import('@aws-sdk/client-s3') = require('@aws-sdk/client-s3');
  const client = new sdk.S3Client({
    endpoint: config.OBJECT_STORAGE_URL,
    region: config.OBJECT_STORAGE_REGION,
    forcePathStyle: config.OBJECT_STORAGE_FORCE_PATH_STYLE,
    credentials:
      config.OBJECT_STORAGE_ACCESS_KEY_ID && config.OBJECT_STORAGE_SECRET_ACCESS_KEY
        ? { accessKeyId: config.OBJECT_STORAGE_ACCESS_KEY_ID, secretAccessKey: config.OBJECT_STORAGE_SECRET_ACCESS_KEY }
        : undefined,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const list = async (max?: number): Promise<string[]> => {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({ Bucket: config.OBJECT_STORAGE_BUCKET, ContinuationToken: token, MaxKeys: max }),
      );
      for (const o of page.Contents ?? []) if (o.Key && isValidKey(o.Key)) keys.push(o.Key);
      token = max ? undefined : page.NextContinuationToken;
    } while (token);
    return keys.sort();
  };
  return {
    storage,
    where: `s3://${config.OBJECT_STORAGE_BUCKET} at ${config.OBJECT_STORAGE_URL}`,
    keys: () => list(),
    isEmpty: async () => (await list(1)).length === 0,
    close() {
      client.destroy();
      (storage as { close?(): void }).close?.();
    },
  };
}

/** Keys of the files under `dir` (temporary files of an interrupted put are not objects). */
function walk(dir: string, prefix: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const keys: string[] = [];
  for (const e of entries) {
    const key = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) keys.push(...walk(path.join(dir, e.name), key));
    else if (e.isFile() && isValidKey(key)) keys.push(key);
  }
  return keys;
}

export function encodeObject(contentType: string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${contentType}\n`), body]);
}

export function decodeObject(data: Buffer): { contentType: string; body: Buffer } {
  const end = data.indexOf(0x0a);
  if (end < 0) throw new Error('an object entry without its content type');
  return { contentType: data.subarray(0, end).toString('utf8'), body: data.subarray(end + 1) };
}
