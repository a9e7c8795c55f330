import * as path from 'node:path';
import { z } from 'zod';
import { boolVar, type ConfigOf } from '@platform/service-kit';
import { FileObjectStorage } from './file-storage';
import type { ObjectStorage } from './object-storage';
import { S3ObjectStorage } from './s3-storage';

/** Variables of the object storage, read by the apps that store objects and by the gateway (signing). */
export const objectStorageEnv = {
  /** S3 endpoint; unset means files under DATA_DIR/objects. */
  OBJECT_STORAGE_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  OBJECT_STORAGE_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name')
    .default('platform'),
  OBJECT_STORAGE_REGION: z.string().default('us-east-1'),
  OBJECT_STORAGE_ACCESS_KEY_ID: z.string().optional(),
  OBJECT_STORAGE_SECRET_ACCESS_KEY: z.string().optional(),
  OBJECT_STORAGE_FORCE_PATH_STYLE: boolVar.default(true),
  /** HMAC key of signed object URLs; at least 32 characters. Generated under DATA_DIR when unset in embedded mode. */
  OBJECT_STORAGE_SIGNING_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
};
export type ObjectStorageConfig = ConfigOf<typeof objectStorageEnv> & { DATA_DIR: string };

/** The object storage the configuration names: S3 when OBJECT_STORAGE_URL is set, else files under DATA_DIR/objects. */
export function openObjectStorage(config: ObjectStorageConfig): ObjectStorage {
  if (!config.OBJECT_STORAGE_URL) return new FileObjectStorage(path.join(config.DATA_DIR, 'objects'));
  if (!!config.OBJECT_STORAGE_ACCESS_KEY_ID !== !!config.OBJECT_STORAGE_SECRET_ACCESS_KEY) {
    throw new Error('OBJECT_STORAGE_ACCESS_KEY_ID and OBJECT_STORAGE_SECRET_ACCESS_KEY go together');
  }
  return new S3ObjectStorage({
    endpoint: config.OBJECT_STORAGE_URL,
    bucket: config.OBJECT_STORAGE_BUCKET,
    region: config.OBJECT_STORAGE_REGION,
    accessKeyId: config.OBJECT_STORAGE_ACCESS_KEY_ID,
    secretAccessKey: config.OBJECT_STORAGE_SECRET_ACCESS_KEY,
    forcePathStyle: config.OBJECT_STORAGE_FORCE_PATH_STYLE,
  });
}

/**
 * The largest avatar upload in bytes: the gateway enforces it while reading the multipart body, orgs-teams
 * when it stores the image. It stays below gRPC's 4 MiB message limit.
 */
export const avatarLimitEnv = {
  AVATAR_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(3 * 1024 * 1024)
    .default(1024 * 1024),
};
