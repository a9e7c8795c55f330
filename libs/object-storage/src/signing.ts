import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as path from 'node:path';
import { keyFromFile } from '@platform/service-kit';

/** Why a signed URL was refused, or 'ok'. */
export type SignatureCheck = 'ok' | 'invalid' | 'expired';

const SIGNATURE = /^[A-Za-z0-9_-]{43}$/; // base64url of 32 bytes, unpadded
const EXPIRES = /^[1-9]\d{0,11}$/;

/**
 * Time-limited URLs for stored objects: `signature = base64url(HMAC-SHA256(signingKey, key + "\n" + expires))`,
 * with `expires` in Unix seconds. Verification recomputes the MAC and compares in constant time.
 */
export class UrlSigner {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new Error('the object signing key must be at least 32 bytes');
  }

  private mac(key: string, expires: number): Buffer {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest();
  }

  /** The signature of key until expires (Unix seconds). */
  sign(key: string, expires: number): string {
    return this.mac(key, expires).toString('base64url');
  }

  /** The query string (`expires=...&signature=...`) that makes a URL for key valid until expires. */
  query(key: string, expires: number): string {
    return `expires=${expires}&signature=${this.sign(key, expires)}`;
  }

  /** Checks a presented signature; the MAC is checked before the time so a forged URL never learns more than "invalid". */
  verify(key: string, expires: unknown, signature: unknown, nowUnix = Math.floor(Date.now() / 1000)): SignatureCheck {
    if (typeof expires !== 'string' || typeof signature !== 'string' || !EXPIRES.test(expires) || !SIGNATURE.test(signature)) {
      return 'invalid';
    }
    const expected = this.mac(key, Number(expires));
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return Number(expires) < nowUnix ? 'expired' : 'ok';
  }
}

/**
 * An expiry that stays the same for a whole window, so the URL of an unchanged object is stable (and
 * cacheable) for a while: the end of the window after the current one. Valid for at least `ttl` seconds.
 */
export function stableExpiry(ttlSeconds: number, nowUnix = Math.floor(Date.now() / 1000)): number {
  return (Math.floor(nowUnix / ttlSeconds) + 2) * ttlSeconds;
}

export interface SigningKeySettings {
  OBJECT_STORAGE_SIGNING_KEY?: string;
  OBJECT_STORAGE_URL?: string;
  DATA_DIR: string;
}

/** Where the generated signing key is kept in embedded mode. */
export function signingKeyFile(dataDir: string): string {
  return path.join(dataDir, 'object-storage', 'signing-key');
}

/**
 * The key signed URLs are made with: OBJECT_STORAGE_SIGNING_KEY when set (required with OBJECT_STORAGE_URL,
 * where several processes must agree on it); else, in embedded mode, a random key generated once and kept
 * in DATA_DIR/object-storage/signing-key, so URLs survive restarts. The first process to create the file
 * wins (a hard link never overwrites), and every other one reads it.
 */
export async function loadSigningKey(settings: SigningKeySettings): Promise<Buffer> {
  if (settings.OBJECT_STORAGE_SIGNING_KEY) return Buffer.from(settings.OBJECT_STORAGE_SIGNING_KEY, 'utf8');
  if (settings.OBJECT_STORAGE_URL) {
    throw new Error('OBJECT_STORAGE_SIGNING_KEY is required when OBJECT_STORAGE_URL is set (every gateway must sign alike)');
  }
  return Buffer.from(await keyFromFile(signingKeyFile(settings.DATA_DIR), () => randomBytes(32).toString('base64url')), 'utf8');
}
