import { createHash, createHmac } from 'node:crypto';

/**
 * S3 presigned GET URLs (AWS Signature Version 4, query-string authentication): a URL that downloads one object
 * without credentials until it expires, as S3 and S3-compatible stores (MinIO, ...) verify it. Written on
 * node:crypto from AWS's specification ("Authenticating Requests: Using Query Parameters"); the tests check it
 * against AWS's published example.
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

const hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 encoding as SigV4 wants it: every byte but unreserved characters; `/` kept in paths. */
function encode(s: string, keepSlash = false): string {
  const encoded = encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? encoded.replace(/%2F/g, '/') : encoded;
}

/** `20130524T000000Z` */
const amzDate = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** A URL that GETs `key` from the bucket without credentials for `expiresSeconds` from `now`. */
export function presignGetUrl(opts: PresignOptions, key: string, expiresSeconds: number, now: Date = new Date()): string {
  if (!Number.isInteger(expiresSeconds) || expiresSeconds < 1 || expiresSeconds > MAX_PRESIGN_SECONDS) {
    throw new Error(`a presigned URL lasts 1 to ${MAX_PRESIGN_SECONDS} seconds`);
  }
  const endpoint = new URL(opts.endpoint);
  const base = endpoint.pathname.replace(/\/+$/, '');
  const host = opts.forcePathStyle ? endpoint.host : `${opts.bucket}.${endpoint.host}`;
  const path = `${base}${opts.forcePathStyle ? `/${encode(opts.bucket)}` : ''}/${encode(key, true)}`;
  const datetime = amzDate(now);
  const scope = `${datetime.slice(0, 8)}/${opts.region}/s3/aws4_request`;
  const query: [string, string][] = [
    ['X-Amz-Algorithm', 'AWS4-HMAC-SHA256'],
    ['X-Amz-Credential', `${opts.accessKeyId}/${scope}`],
    ['X-Amz-Date', datetime],
    ['X-Amz-Expires', String(expiresSeconds)],
    ['X-Amz-SignedHeaders', 'host'],
  ];
  const canonicalQuery = query
    .map(([k, v]) => `${encode(k)}=${encode(v)}`)
    .sort()
    .join('&');
  const canonicalRequest = ['GET', path, canonicalQuery, `host:${host}`, '', 'host', 'UNSIGNED-PAYLOAD'].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', datetime, scope, hex(canonicalRequest)].join('\n');
  let signingKey = hmac(`AWS4${opts.secretAccessKey}`, datetime.slice(0, 8));
  for (const part of [opts.region, 's3', 'aws4_request']) signingKey = hmac(signingKey, part);
  const signature = createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
  return `${endpoint.protocol}//${host}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}
