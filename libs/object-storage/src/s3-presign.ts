import type { S3Client } from '@aws-sdk/client-s3';

/**
 * S3 presigned GET URLs (AWS Signature Version 4, query-string authentication): a URL that downloads one object
 * without credentials until it expires, as S3 and S3-compatible stores (MinIO, ...) verify it. Made by AWS's own
 * presigner (`@aws-sdk/s3-request-presigner`) over an S3 client of the same settings. Both are loaded on the first URL:
 * the embedded default never pays for the SDK.
 */

/* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, see above */
const s3 = () => require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3');
const presigner = () => require('@aws-sdk/s3-request-presigner') as typeof import('@aws-sdk/s3-request-presigner');
/* eslint-enable @typescript-eslint/no-require-imports */

export interface PresignOptions {
  /** The S3 endpoint, e.g. `https://s3.eu-west-1.amazonaws.com` or `http://minio:9000`. */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** `http://host/bucket/key` (true) or `http://bucket.host/key`. */
  forcePathStyle: boolean;
}

/** The longest validity S3 accepts for a presigned URL: seven days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

// One client per settings: presigning needs no connection, only the client's configuration and signer.
const clients = new Map<string, S3Client>();

function clientFor(opts: PresignOptions): S3Client {
  const key = JSON.stringify([opts.endpoint, opts.region, opts.accessKeyId, opts.secretAccessKey, opts.forcePathStyle]);
  let client = clients.get(key);
  if (!client) {
    client = new (s3().S3Client)({
      endpoint: opts.endpoint,
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
    });
    clients.set(key, client);
  }
  return client;
}

/** A URL that GETs `key` from the bucket without credentials for `expiresSeconds` from `now`. */
export async function presignGetUrl(opts: PresignOptions, key: string, expiresSeconds: number, now: Date = new Date()): Promise<string> {
  if (!Number.isInteger(expiresSeconds) || expiresSeconds < 1 || expiresSeconds > MAX_PRESIGN_SECONDS) {
    throw new Error(`a presigned URL lasts 1 to ${MAX_PRESIGN_SECONDS} seconds`);
  }
  return presigner().getSignedUrl(clientFor(opts), new (s3().GetObjectCommand)({ Bucket: opts.bucket, Key: key }), {
    expiresIn: expiresSeconds,
    signingDate: now,
  });
}
