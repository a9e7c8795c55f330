import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { keyFromFile } from './key-file';

/** AES-256-GCM for secrets that must be shown again later (never for ones a hash can verify). */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the secrets key must be 32 bytes');
  }

  /** The key from SECRETS_ENCRYPTION_KEY (base64), or, for the embedded defaults, one kept under DATA_DIR. */
  static async fromConfig(keyBase64: string | undefined, dataDir: string): Promise<SecretBox> {
    const key =
      keyBase64 ?? (await keyFromFile(path.resolve(dataDir, 'secrets', 'encryption.key'), () => randomBytes(32).toString('base64')));
    return new SecretBox(Buffer.from(key, 'base64'));
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64 parts. */
  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1') throw new Error('unknown secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  }
}
