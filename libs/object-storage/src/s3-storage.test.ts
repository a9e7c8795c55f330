import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@platform/service-kit';
import { UnavailableError } from '@platform/errors';
import { objectStorageEnv, openObjectStorage } from './config';
import { S3ObjectStorage } from './s3-storage';

/**
 * A minimal S3-compatible server (path-style PUT, GET, DELETE on one bucket) so the real SDK client is
 * exercised over HTTP: request signing, content type, NoSuchKey, deletes. It records each request.
 */
async function startS3() {
  const objects = new Map<string, { body: Buffer; contentType: string }>();
  const requests: { method: string; url: string; authorization: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization ?? '' });
      const url = new URL(req.url!, 'http://s3');
      const [, bucket, ...rest] = url.pathname.split('/');
      const key = decodeURIComponent(rest.join('/'));
      if (bucket !== 'avatars-bucket') {
        res.writeHead(404, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0"?><Error><Code>NoSuchBucket</Code><Message>no bucket</Message></Error>');
        return;
      }
      if (!/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/eu-test-1\/s3\/aws4_request/.test(req.headers.authorization ?? '')) {
        res.writeHead(403, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>denied</Message></Error>');
        return;
      }
      if (req.method === 'PUT') {
        objects.set(key, { body: Buffer.concat(chunks), contentType: String(req.headers['content-type']) });
        res.writeHead(200, { etag: '"x"' });
        res.end();
      } else if (req.method === 'GET') {
        const obj = objects.get(key);
        if (!obj) {
          res.writeHead(404, { 'content-type': 'application/xml' });
          res.end(`<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>missing</Message><Key>${key}</Key></Error>`);
          return;
        }
        res.writeHead(200, { 'content-type': obj.contentType, 'content-length': obj.body.length });
        res.end(obj.body);
      } else if (req.method === 'DELETE') {
        objects.delete(key);
        res.writeHead(204);
        res.end();
      } else {
        res.writeHead(405);
        res.end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, objects, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('S3ObjectStorage (OBJECT_STORAGE_URL)', () => {
  let s3: Awaited<ReturnType<typeof startS3>>;
  beforeAll(async () => {
    s3 = await startS3();
  });
  afterAll(() => s3.close());

  const configFor = (env: Record<string, string>) =>
    ({ ...loadConfig(objectStorageEnv, env), DATA_DIR: '/nonexistent' }) as Parameters<typeof openObjectStorage>[0];

  it('is chosen by OBJECT_STORAGE_URL and puts, gets and deletes through the S3 API with signed requests', async () => {
    const storage = openObjectStorage(
      configFor({
        OBJECT_STORAGE_URL: s3.url,
        OBJECT_STORAGE_BUCKET: 'avatars-bucket',
        OBJECT_STORAGE_REGION: 'eu-test-1',
        OBJECT_STORAGE_ACCESS_KEY_ID: 'AKIDTEST',
        OBJECT_STORAGE_SECRET_ACCESS_KEY: 'secret-test-key',
      }),
    );
    try {
      expect(storage).toBeInstanceOf(S3ObjectStorage);
      const body = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
      await storage.put('avatars/org/7/abc.jpg', body, 'image/jpeg');
      expect(s3.objects.get('avatars/org/7/abc.jpg')).toEqual({ body, contentType: 'image/jpeg' });
      expect(s3.requests.at(-1)).toMatchObject({
        method: 'PUT',
        url: expect.stringMatching(/^\/avatars-bucket\/avatars\/org\/7\/abc\.jpg(\?|$)/),
      });

      expect(await storage.get('avatars/org/7/abc.jpg')).toEqual({ body, contentType: 'image/jpeg' });
      expect(await storage.get('avatars/org/7/missing.jpg')).toBeUndefined();

      await storage.delete('avatars/org/7/abc.jpg');
      expect(s3.objects.has('avatars/org/7/abc.jpg')).toBe(false);
      expect(await storage.get('avatars/org/7/abc.jpg')).toBeUndefined();
    } finally {
      storage.close();
    }
  });

  it('surfaces a refusal by the store as an error, and an unreachable store as 503', async () => {
    const wrongKey = new S3ObjectStorage({
      endpoint: s3.url,
      bucket: 'avatars-bucket',
      region: 'eu-test-1',
      accessKeyId: 'OTHER',
      secretAccessKey: 'x',
      forcePathStyle: true,
    });
    await expect(wrongKey.put('k', Buffer.from('v'), 'text/plain')).rejects.toMatchObject({ name: 'AccessDenied' });
    wrongKey.close();

    const down = new S3ObjectStorage({
      endpoint: 'http://127.0.0.1:1',
      bucket: 'avatars-bucket',
      region: 'eu-test-1',
      accessKeyId: 'AKIDTEST',
      secretAccessKey: 'x',
      forcePathStyle: true,
    });
    await expect(down.get('k')).rejects.toBeInstanceOf(UnavailableError);
    await expect(down.put('k', Buffer.from('v'), 'text/plain')).rejects.toBeInstanceOf(UnavailableError);
    down.close();
  });

  it('rejects half a credential pair and a bad endpoint at configuration time', () => {
    expect(() => openObjectStorage(configFor({ OBJECT_STORAGE_URL: s3.url, OBJECT_STORAGE_ACCESS_KEY_ID: 'AKIDTEST' }))).toThrow(
      /go together/,
    );
    expect(() => loadConfig(objectStorageEnv, { OBJECT_STORAGE_URL: 'ftp://x' })).toThrow(/OBJECT_STORAGE_URL/);
    expect(() => loadConfig(objectStorageEnv, { OBJECT_STORAGE_SIGNING_KEY: 'short' })).toThrow(/OBJECT_STORAGE_SIGNING_KEY/);
  });
});
