import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SecretBox } from './secret-box';

describe('SecretBox', () => {
  it('opens what it sealed, hides the plaintext and refuses an altered box', () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.seal('-----BEGIN PRIVATE KEY-----');
    expect(sealed).not.toContain('PRIVATE KEY');
    expect(box.open(sealed)).toBe('-----BEGIN PRIVATE KEY-----');
    const [v, iv, tag, data] = sealed.split('.');
    const flipped = Buffer.from(data, 'base64');
    flipped[0] ^= 1;
    expect(() => box.open([v, iv, tag, flipped.toString('base64')].join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
  });

  it('keeps one key under DATA_DIR when no key is configured', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-box-'));
    try {
      const sealed = (await SecretBox.fromConfig(undefined, dir)).seal('x');
      expect((await SecretBox.fromConfig(undefined, dir)).open(sealed)).toBe('x');
      expect(fs.existsSync(path.join(dir, 'secrets', 'encryption.key'))).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
