import { createHash, createHmac } from 'node:crypto';
import { presignGetUrl } from './s3-presign';

const EXAMPLE = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
  bucket: 'examplebucket',
};

/**
 * What S3 does with a presigned GET (AWS's "Authenticating Requests: Using Query Parameters"): rebuilds the
 * canonical request from the URL and checks the signature with the secret key. Written here from the
 * specification only to check the SDK's URLs, independently of the SDK.
 */
function s3Accepts(urlText: string, secret: string): boolean {
  const url = new URL(urlText);
  const q = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature');
  const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const canonicalQuery = q
    .map(([k, v]) => `${enc(k)}=${enc(v)}`)
    .sort()
    .join('&');
  const signed = url.searchParams.get('X-Amz-SignedHeaders')!;
  const canonicalRequest = ['GET', url.pathname, canonicalQuery, `host:${url.host}`, '', signed, 'UNSIGNED-PAYLOAD'].join('\n');
  const datetime = url.searchParams.get('X-Amz-Date')!;
  const scope = url.searchParams.get('X-Amz-Credential')!.split('/').slice(1).join('/');
  const stringToSign = ['AWS4-HMAC-SHA256', datetime, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  let key: Buffer = createHmac('sha256', `AWS4${secret}`).update(datetime.slice(0, 8)).digest();
  for (const part of scope.split('/').slice(1)) key = createHmac('sha256', key).update(part).digest();
  return createHmac('sha256', key).update(stringToSign).digest('hex') === url.searchParams.get('X-Amz-Signature');
}

describe('presignGetUrl (S3 SigV4 query authentication, by AWS’s presigner)', () => {
  it('signs a GET of the object for the lifetime asked, as S3 verifies it (AWS’s example credentials, 2013-05-24)', async () => {
    const url = new URL(
      await presignGetUrl({ ...EXAMPLE, endpoint: 'https://s3.amazonaws.com', forcePathStyle: false }, 'test.txt', 86400, new Date('2013-05-24T00:00:00Z')),
    );
    expect(url.host).toBe('examplebucket.s3.amazonaws.com');
    expect(url.pathname).toBe('/test.txt');
    expect(url.searchParams.get('X-Amz-Credential')).toBe('AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request');
    expect(url.searchParams.get('X-Amz-Date')).toBe('20130524T000000Z');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('86400');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    expect(s3Accepts(url.toString(), EXAMPLE.secretAccessKey)).toBe(true);
    expect(s3Accepts(url.toString(), 'another secret')).toBe(false);
  });

  it('addresses the bucket in the path for path-style stores (MinIO) and keeps the key’s slashes', async () => {
    const url = new URL(
      await presignGetUrl({ ...EXAMPLE, endpoint: 'http://127.0.0.1:9000', forcePathStyle: true }, 'contracts/documents/a b/x.pdf', 1800),
    );
    expect(url.host).toBe('127.0.0.1:9000');
    expect(url.pathname).toBe('/examplebucket/contracts/documents/a%20b/x.pdf');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('1800');
    expect(s3Accepts(url.toString(), EXAMPLE.secretAccessKey)).toBe(true);
  });

  it('refuses a lifetime S3 would not accept', async () => {
    const opts = { ...EXAMPLE, endpoint: 'https://s3.amazonaws.com', forcePathStyle: false };
    await expect(presignGetUrl(opts, 'k', 0)).rejects.toThrow();
    await expect(presignGetUrl(opts, 'k', 8 * 24 * 3600)).rejects.toThrow();
  });
});
