import type * as S3 from '@aws-sdk/client-s3';
import { UnavailableError } from '@platform/errors';
import { assertValidContentType, assertValidKey, type ObjectStorage, type StoredObject } from './object-storage';

export interface S3StorageOptions {
  /** The S3 endpoint, e.g. `http://minio:9000` or `https://s3.eu-west-1.amazonaws.com`. */
  endpoint: string;
  bucket: string;
  region: string;
  /** Static credentials; when absent the SDK's default chain applies (AWS_* variables, web identity, ...). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `http://host/bucket/key` addressing (MinIO and most S3-compatible stores) instead of `http://bucket.host/key`. */
  forcePathStyle: boolean;
  /** Limit of each attempt: to connect, to get an answer, and of a stalled socket (default 10 s). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

interface SdkError {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

/** S3 (or any S3-compatible store) through the official SDK. */
export class S3ObjectStorage implements ObjectStorage {
  readonly description: string;
  private readonly client: S3.S3Client;
  private readonly sdk: typeof S3;

  constructor(private readonly opts: S3StorageOptions) {
    this.description = `s3://${opts.bucket} at ${opts.endpoint}`;
    // Loaded only when S3 is configured: the embedded default never pays for the SDK.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    this.sdk = require('@aws-sdk/client-s3');
    this.client = new this.sdk.S3Client({
      endpoint: opts.endpoint,
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      credentials:
        opts.accessKeyId && opts.secretAccessKey ? { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } : undefined,
      // Checksums only where S3 requires them: several S3-compatible stores reject the SDK's default CRC headers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
      // The SDK waits forever by default; a store that stops answering must fail the call (503), not hang it.
      requestHandler: {
        connectionTimeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        requestTimeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        throwOnRequestTimeout: true,
        socketTimeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      },
    });
  }

  async put(key: string, body: Buffer, contentType: string): Promise<void> {
    assertValidKey(key);
    assertValidContentType(contentType);
    await this.send(() =>
      this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.opts.bucket, Key: key, Body: body, ContentType: contentType })),
    );
  }

  async get(key: string): Promise<StoredObject | undefined> {
    assertValidKey(key);
    try {
      const out = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.opts.bucket, Key: key }));
      const bytes = out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
      return { body: Buffer.from(bytes), contentType: out.ContentType ?? 'application/octet-stream' };
    } catch (err) {
      const e = err as SdkError;
      if (e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404) return undefined;
      throw unreachable(err);
    }
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    // S3 answers 204 for a missing key too.
    await this.send(() => this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.opts.bucket, Key: key })));
  }

  close(): void {
    this.client.destroy();
  }

  private async send<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw unreachable(err);
    }
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/** A failure without an HTTP answer (connection refused, DNS, timeout) means the store is down: 503. Others stay as they are (500, logged). */
function unreachable(err: unknown): unknown {
  const e = err as SdkError & { code?: string; message?: string };
  if (!e || typeof e !== 'object' || e.$metadata?.httpStatusCode !== undefined) return err;
  // The SDK may wrap a socket error from another realm as "AWS SDK error wrapper for Error: connect ECONNREFUSED ...".
  const code = e.code ?? /\b(E[A-Z]{4,})\b/.exec(e.message ?? '')?.[1] ?? '';
  if (NETWORK_CODES.has(code) || e.name === 'TimeoutError') {
    return new UnavailableError('object storage is unavailable');
  }
  return err;
}
