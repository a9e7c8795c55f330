import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NotFoundError } from '@platform/errors';
import { orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// A contract's document on S3 (OBJECT_STORAGE_URL with static credentials, docs/contracts.md): the admin and the
// user document rows answer a URL of the bucket presigned for 30 minutes, which the bucket serves without a token;
// the bytes never pass through the gateway. The document stored in the bucket by contracts-licensing:
// apps/contracts-licensing/test/contract-documents-s3.int.test.ts; the signature as S3 verifies it:
// libs/object-storage/src/s3-presign.test.ts.

const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true });
const CONTRACT = 7;
const PATH = 'contracts/5f0c/contract.txt';
const DOCUMENT = 'signed contract: every page initialled\n';

/** A bucket that serves its objects to a GET carrying a presigned URL's query, as S3 does without credentials. */
async function startBucket() {
  const objects = new Map<string, string>([[PATH, DOCUMENT]]);
  const gets: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://s3');
    const [, bucket, ...rest] = url.pathname.split('/');
    const presigned = url.searchParams.get('X-Amz-Credential')?.startsWith('AKIDCONTRACTS/') && !!url.searchParams.get('X-Amz-Signature');
    const obj = objects.get(decodeURIComponent(rest.join('/')));
    if (req.method === 'GET' && presigned && bucket === 'contracts-bucket' && obj !== undefined) {
      gets.push(req.url!);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(obj);
    } else {
      res.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code></Error>');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, gets, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('contract documents on S3 (OBJECT_STORAGE_URL)', () => {
  let backends: FakeBackends;
  let bucket: Awaited<ReturnType<typeof startBucket>>;
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    bucket = await startBucket();
    backends = await startFakeBackends({
      orgsTeams: { identity: { authenticate: tokenIsLogin([ROOT]) } },
      authz: { authz: { checkPermission: async ({ userId }) => ({ allowed: userId === ROOT.id, dependsOn: [] }) } },
      contractsLicensing: {
        contracts: {
          getDocument: async ({ id }) => {
            if (id !== CONTRACT) throw new NotFoundError(`contract ${id} does not exist`);
            return { path: PATH, fileName: 'contract.txt', contentType: 'text/plain' };
          },
        },
      },
    });
    ({ base, close } = await startTestGateway({
      ...backends.env,
      DEPLOYMENT_TYPE: 'Hosted',
      PLATFORM_ADMIN_ORG: 'none',
      OBJECT_STORAGE_URL: bucket.url,
      OBJECT_STORAGE_BUCKET: 'contracts-bucket',
      OBJECT_STORAGE_REGION: 'eu-test-1',
      OBJECT_STORAGE_ACCESS_KEY_ID: 'AKIDCONTRACTS',
      OBJECT_STORAGE_SECRET_ACCESS_KEY: 'secret-of-the-contracts-test',
      OBJECT_STORAGE_SIGNING_KEY: 'k'.repeat(40),
    }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
    await bucket?.close();
  });

  const documentUrl = async (path: string) => {
    const res = await fetch(`${base}/api/v1${path}`, { headers: { authorization: 'token root' } });
    expect(res.status).toBe(200);
    return new URL((await res.json()) as string);
  };

  it('answers a URL of the bucket presigned for 30 minutes that the bucket serves', async () => {
    const url = await documentUrl(`/contracts/${CONTRACT}/document`);
    expect(url.origin).toBe(bucket.url);
    expect(url.pathname).toBe(`/contracts-bucket/${PATH}`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('1800');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIDCONTRACTS\/\d{8}\/eu-test-1\/s3\/aws4_request$/);
    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(DOCUMENT);
    expect(bucket.gets).toHaveLength(1);
    const user = await documentUrl(`/user/contracts/${CONTRACT}/document`);
    expect(user.origin).toBe(bucket.url);
    expect(user.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });
});
