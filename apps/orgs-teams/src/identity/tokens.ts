import { createHash, randomBytes } from 'node:crypto';

/** A new personal access token: 40 hex characters (160 random bits), like Gitea's. */
export function generateToken(): string {
  return randomBytes(20).toString('hex');
}

/**
 * Tokens are stored as SHA-256: they are random and long, so a fast hash is enough (no brute force),
 * and the hash is the lookup key, so presenting a token never compares secrets byte by byte.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
