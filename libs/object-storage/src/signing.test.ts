import { createHmac } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSigningKey, signingKeyFile, stableExpiry, UrlSigner } from './signing';

describe('signed object URLs', () => {
  const secret = Buffer.from('0123456789abcdef0123456789abcdef');
  const signer = new UrlSigner(secret);

  it('signs HMAC-SHA256 over key and expiry, base64url', () => {
    const expected = createHmac('sha256', secret).update('avatars/org/1/a.png\n2000000000').digest('base64url');
    expect(signer.sign('avatars/org/1/a.png', 2000000000)).toBe(expected);
    expect(signer.query('avatars/org/1/a.png', 2000000000)).toBe(`expires=2000000000&signature=${expected}`);
  });

  it('accepts its own signature until the expiry and refuses everything else', () => {
    const sig = signer.sign('k/1', 1000);
    expect(signer.verify('k/1', '1000', sig, 999)).toBe('ok');
    expect(signer.verify('k/1', '1000', sig, 1000)).toBe('ok');
    expect(signer.verify('k/1', '1000', sig, 1001)).toBe('expired');
    // Another key, another expiry, another secret, a flipped character, malformed or missing values.
    expect(signer.verify('k/2', '1000', sig, 0)).toBe('invalid');
    expect(signer.verify('k/1', '1001', sig, 0)).toBe('invalid');
    expect(new UrlSigner(Buffer.alloc(32, 1)).verify('k/1', '1000', sig, 0)).toBe('invalid');
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    expect(signer.verify('k/1', '1000', flipped, 0)).toBe('invalid');
    expect(signer.verify('k/1', '1000', sig.slice(1), 0)).toBe('invalid');
    expect(signer.verify('k/1', '01000', sig, 0)).toBe('invalid');
    expect(signer.verify('k/1', undefined, sig, 0)).toBe('invalid');
    expect(signer.verify('k/1', '1000', [sig], 0)).toBe('invalid');
    // A forged signature on an expired URL is "invalid", not "expired".
    expect(signer.verify('k/1', '1000', flipped, 5000)).toBe('invalid');
  });

  it('refuses short signing keys', () => {
    expect(() => new UrlSigner(Buffer.alloc(16))).toThrow(/at least 32 bytes/);
  });

  it('keeps an expiry stable within a window and at least one window ahead', () => {
    expect(stableExpiry(3600, 7200)).toBe(14400);
    expect(stableExpiry(3600, 10799)).toBe(14400);
    expect(stableExpiry(3600, 10800)).toBe(18000);
    for (const now of [0, 1, 3599, 3600, 123456]) expect(stableExpiry(3600, now) - now).toBeGreaterThanOrEqual(3600);
  });

  describe('loadSigningKey', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signing-'));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('uses OBJECT_STORAGE_SIGNING_KEY when set and writes nothing', async () => {
      const key = await loadSigningKey({ OBJECT_STORAGE_SIGNING_KEY: 'k'.repeat(40), DATA_DIR: dir });
      expect(key.toString()).toBe('k'.repeat(40));
      expect(fs.readdirSync(dir)).toEqual([]);
    });

    it('generates one key under DATA_DIR in embedded mode, private to the owner, and reuses it (even under concurrency)', async () => {
      const keys = await Promise.all(Array.from({ length: 8 }, () => loadSigningKey({ DATA_DIR: dir })));
      expect(new Set(keys.map((k) => k.toString())).size).toBe(1);
      expect(keys[0].length).toBeGreaterThanOrEqual(32);
      const file = signingKeyFile(dir);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readdirSync(path.dirname(file))).toEqual(['signing-key']);
      expect((await loadSigningKey({ DATA_DIR: dir })).equals(keys[0])).toBe(true);
    });

    it('demands OBJECT_STORAGE_SIGNING_KEY with an S3 store', async () => {
      await expect(loadSigningKey({ OBJECT_STORAGE_URL: 'http://s3', DATA_DIR: dir })).rejects.toThrow(
        /OBJECT_STORAGE_SIGNING_KEY is required/,
      );
    });
  });
});
