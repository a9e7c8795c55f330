import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { contractsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { contractsLicensingApp } from '../src/app';

// With OBJECT_STORAGE_URL set, contracts-licensing keeps a contract's document in that bucket through the S3 API
// (signed requests with the configured key), under the path the contract answers. The URL the gateway answers
// for it: apps/gateway/test/contract-documents-s3.test.ts; the S3 client itself: libs/object-storage.

const DOCUMENT = 'signed contract: every page initialled\n';

/** A bucket of an S3-compatible store taking PUTs signed with the test's key, as S3 does. */
async function startBucket() {
  const objects = new Map<string, { body: Buffer; type: string }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://s3');
      const [, bucket, ...rest] = url.pathname.split('/');
      const signed = /^AWS4-HMAC-SHA256 Credential=AKIDCONTRACTS\/\d{8}\/eu-test-1\/s3\/aws4_request/.test(req.headers.authorization ?? '');
      if (bucket === 'contracts-bucket' && req.method === 'PUT' && signed) {
        objects.set(decodeURIComponent(rest.join('/')), { body: Buffer.concat(chunks), type: String(req.headers['content-type']) });
        res.writeHead(200, { etag: '"x"' }).end();
      } else {
        res.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, objects, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('contract documents on S3 (OBJECT_STORAGE_URL)', () => {
  let bucket: Awaited<ReturnType<typeof startBucket>>;
  let app: AppUnderTest;
  let contracts: PromiseClient<typeof contractsV1.ContractsServiceService>;

  beforeAll(async () => {
    bucket = await startBucket();
    app = await startAppForTest(contractsLicensingApp, {
      OBJECT_STORAGE_URL: bucket.url,
      OBJECT_STORAGE_BUCKET: 'contracts-bucket',
      OBJECT_STORAGE_REGION: 'eu-test-1',
      OBJECT_STORAGE_ACCESS_KEY_ID: 'AKIDCONTRACTS',
      OBJECT_STORAGE_SECRET_ACCESS_KEY: 'secret-of-the-contracts-test',
    });
    contracts = createClient(contractsV1.ContractsServiceService, app.address, { name: 'contracts-licensing' });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await bucket?.close();
  });

  it('stores the document in the bucket under the path the contract answers', async () => {
    const { contracts: made } = await contracts.createContracts({
      ownerId: 42,
      products: ['productdb'],
      fields: { features: [], featuresGiven: false, endUnix: Math.floor(Date.now() / 1000) + 365 * 86_400 },
      document: { fileName: 'contract.txt', contentType: 'text/plain', content: Buffer.from(DOCUMENT) },
      actor: 'root',
      ownerLogin: 'acme',
      ownerType: 'organization',
    });
    expect(made).toHaveLength(1);
    expect(made[0].documentPath).not.toBe('');
    expect([...bucket.objects.keys()]).toEqual([made[0].documentPath]);
    expect(bucket.objects.get(made[0].documentPath)?.body.toString()).toBe(DOCUMENT);
    expect(await contracts.getDocument({ id: made[0].id, ownerId: 0, actor: 'root' })).toMatchObject({
      path: made[0].documentPath,
      fileName: 'contract.txt',
    });
  });
});
