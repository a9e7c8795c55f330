import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An in-process S3-compatible server, path-style, for the real SDK client over HTTP (as the object store's tests
 * do): PUT, GET, HEAD, DELETE of objects and ListObjectsV2 (prefix, delimiter, pages of `pageSize` with continuation
 * tokens), in any bucket created up front. A request not signed with ACCESS_KEY is denied, as S3 would.
 */
export const ACCESS_KEY = 'AKIDBACKUPTEST';
export const SECRET_KEY = 'secret-of-the-backup-test';

export interface S3Bucket {
  url: string;
  /** bucket → key → object */
  buckets: Map<string, Map<string, { body: Buffer; contentType: string }>>;
  requests: { method: string; url: string }[];
  close(): Promise<void>;
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function error(res: http.ServerResponse, status: number, code: string) {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
}

export async function startS3(
  bucketNames: string[],
  /** `beforeGet`: awaited before an object's GET is answered (a download that waits until the test lets it go). */
  opts: { pageSize?: number; beforeGet?: (key: string) => Promise<void> } = {},
): Promise<S3Bucket> {
  const buckets = new Map(bucketNames.map((b) => [b, new Map<string, { body: Buffer; contentType: string }>()]));
  const requests: S3Bucket['requests'] = [];
  const pageSize = opts.pageSize ?? 1000;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url! });
      const url = new URL(req.url!, 'http://s3');
      const [, bucketName, ...rest] = url.pathname.split('/');
      const key = decodeURIComponent(rest.join('/'));
      const bucket = buckets.get(bucketName);
      if (!bucket) return error(res, 404, 'NoSuchBucket');
      if (!new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY}/`).test(req.headers.authorization ?? '')) {
        return error(res, 403, 'AccessDenied');
      }
      if (req.method === 'GET' && key === '' && url.searchParams.get('list-type') === '2') {
        const prefix = url.searchParams.get('prefix') ?? '';
        const delimiter = url.searchParams.get('delimiter');
        const after = url.searchParams.get('continuation-token');
        const max = Math.min(Number(url.searchParams.get('max-keys') ?? 1000), pageSize);
        const matching = [...bucket.keys()]
          .filter((k) => k.startsWith(prefix) && !(delimiter && k.slice(prefix.length).includes(delimiter)))
          .sort()
          .filter((k) => !after || k > Buffer.from(after, 'base64').toString());
        const page = matching.slice(0, max);
        const truncated = matching.length > page.length;
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
            `<Name>${bucketName}</Name><Prefix>${xml(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys>` +
            `<IsTruncated>${truncated}</IsTruncated>` +
            (truncated ? `<NextContinuationToken>${Buffer.from(page.at(-1)!).toString('base64')}</NextContinuationToken>` : '') +
            page
              .map(
                (k) =>
                  `<Contents><Key>${xml(k)}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"x"</ETag>` +
                  `<Size>${bucket.get(k)!.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
              )
              .join('') +
            `</ListBucketResult>`,
        );
        return;
      }
      if (req.method === 'PUT') {
        bucket.set(key, { body: Buffer.concat(chunks), contentType: String(req.headers['content-type'] ?? 'application/octet-stream') });
        res.writeHead(200, { etag: '"x"' });
        return res.end();
      }
      if (req.method === 'GET' || req.method === 'HEAD') {
        const obj = bucket.get(key);
        if (!obj) return error(res, 404, 'NoSuchKey');
        const answer = () => {
          res.writeHead(200, { 'content-type': obj.contentType, 'content-length': obj.body.length });
          res.end(req.method === 'GET' ? obj.body : undefined);
        };
        if (req.method === 'GET' && opts.beforeGet) return void opts.beforeGet(key).then(answer);
        return answer();
      }
      if (req.method === 'DELETE') {
        bucket.delete(key);
        res.writeHead(204);
        return res.end();
      }
      error(res, 405, 'MethodNotAllowed');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, buckets, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}
