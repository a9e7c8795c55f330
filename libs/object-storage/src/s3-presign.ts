import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

/**
 * S3 presigned GET URLs (AWS Signature Version 4, query-string authentication): a URL that downloads one object
 * without credentials until it expires, as S3 and S3-compatible stores (MinIO, ...) verify it. Made by AWS's own
 * presigner (`@aws-sdk/s3-request-presigner`) over an S3 client of the same settings.
 */

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
    client = new S3Client({
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
  return getSignedUrl(clientFor(opts), new GetObjectCommand({ Bucket: opts.bucket, Key: key }), {
    expiresIn: expiresSeconds,
    signingDate: now,
  });
}
