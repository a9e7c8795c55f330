import { presignGetUrl } from './s3-presign';

const EXAMPLE = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
  bucket: 'examplebucket',
};

describe('presignGetUrl (S3 SigV4 query authentication)', () => {
  it('signs AWS’s published example exactly (GET examplebucket/test.txt, 2013-05-24, 86400 s)', () => {
    const url = presignGetUrl(
      { ...EXAMPLE, endpoint: 'https://s3.amazonaws.com', forcePathStyle: false },
      'test.txt',
      86400,
      new Date('2013-05-24T00:00:00Z'),
    );
    expect(url).toBe(
      'https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256' +
        '&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request' +
        '&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host' +
        '&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    );
  });

  it('addresses the bucket in the path for path-style stores (MinIO) and keeps the key’s slashes', () => {
    const url = new URL(
      presignGetUrl({ ...EXAMPLE, endpoint: 'http://127.0.0.1:9000', forcePathStyle: true }, 'contracts/documents/a b/x.pdf', 1800),
    );
    expect(url.host).toBe('127.0.0.1:9000');
    expect(url.pathname).toBe('/examplebucket/contracts/documents/a%20b/x.pdf');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('1800');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a lifetime S3 would not accept', () => {
    const opts = { ...EXAMPLE, endpoint: 'https://s3.amazonaws.com', forcePathStyle: false };
    expect(() => presignGetUrl(opts, 'k', 0)).toThrow();
    expect(() => presignGetUrl(opts, 'k', 8 * 24 * 3600)).toThrow();
  });
});
