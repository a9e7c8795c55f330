import { createHash, randomBytes } from 'node:crypto';
import { createSigner, createVerifier, type SignerSync as Signer, type VerifierSync as Verifier } from 'fast-jwt';
import { ConfigError } from './config';

/**
 * The credential the platform's apps present to each other over gRPC: a short-lived token (HS256) signed with a
 * key of the release (`PLATFORM_APP_KEYS`, in the chart a Secret). No other caller holds the key, so a token
 * that verifies comes from a platform app. Several keys may be given: the first signs, all verify, so a key is
 * rotated without downtime by adding the new one second, then first, then dropping the old one
 * (docs/grpc.md). Without the setting a process makes a key of its own, which only its own apps hold: the
 * one-process `npm start`, and tests.
 */

/** The issuer of app tokens, which tells them apart from service-account and Kubernetes tokens. */
export const APP_TOKEN_ISSUER = 'platformadmin-apps';
/** How long an app token is valid; a client makes a new one when half of it is left. */
const LIFETIME_MS = 10 * 60_000;
/** Clock difference between pods an app token survives. */
const CLOCK_TOLERANCE_MS = 60_000;
/** Verified tokens kept by a process at most. */
const MAX_VERIFIED = 1_000;


/** A key's id in a token's header: the first bytes of its hash, so a verifier picks the key without trying all. */
const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 16);

export class AppCredential {
  private readonly sign: typeof Signer;
  private readonly verifiers: Map<string, typeof Verifier>;
  private current: { token: string; renewAt: number } | undefined;
  /**
   * Tokens this process has verified, with the app each names and until when it is accepted: every call between apps
   * carries one of a few tokens (each app renews its own every five minutes), so a call costs one map lookup rather
   * than decoding its header and hashing it for the verifier's own cache (measured: an eighth of an app's CPU).
   */
  private readonly verified = new Map<string, { app: string; until: number }>();

  private constructor(
    keys: Buffer[],
    private readonly app: string,
    /** Whether the keys came from the setting (shared by the release) or were made by this process. */
    readonly shared: boolean,
  ) {
    this.sign = createSigner({ key: keys[0], algorithm: 'HS256', kid: keyId(keys[0]), iss: APP_TOKEN_ISSUER, expiresIn: LIFETIME_MS });
    // The verifier keeps what it verified (fast-jwt's cache, by token), so a token costs one HMAC per process.
    this.verifiers = new Map(
      keys.map((key) => [
        keyId(key),
        createVerifier({ key, algorithms: ['HS256'], allowedIss: APP_TOKEN_ISSUER, clockTolerance: CLOCK_TOLERANCE_MS, cache: 1_000 }),
      ]),
    );
  }

  static create(keys: string[] | undefined, app: string): AppCredential {
    if (keys?.length) return new AppCredential(keys.map((k) => Buffer.from(k, 'base64')), app, true);
    return new AppCredential([randomBytes(32)], app, false);
  }

  /** A valid token naming this app; the same one until half of its life is gone. */
  token(): string {
    const now = Date.now();
    if (!this.current || now >= this.current.renewAt) this.current = { token: this.sign({ sub: this.app }), renewAt: now + LIFETIME_MS / 2 };
    return this.current.token;
  }

  /** The app a token names when one of our keys signed it and it has not expired; undefined otherwise. */
  verify(token: string): string | undefined {
    const known = this.verified.get(token);
    if (known && Date.now() < known.until) return known.app;
    const header = jwtPart(token, 0);
    const verify = header && this.verifiers.get(String(header.kid));
    if (!verify) return undefined;
    let claims: { sub?: unknown; exp?: unknown };
    try {
      claims = verify(token) as { sub?: unknown; exp?: unknown };
    } catch {
      return undefined;
    }
    if (typeof claims.sub !== 'string') return undefined;
    if (typeof claims.exp === 'number') {
      // Bounded: a release has a few apps, each with one token at a time and the one before it.
      if (this.verified.size >= MAX_VERIFIED) this.verified.clear();
      // Accepted as long as the verifier would accept it: until it expires, give or take the clocks' difference.
      this.verified.set(token, { app: claims.sub, until: claims.exp * 1000 + CLOCK_TOLERANCE_MS });
    }
    return claims.sub;
  }
}

/**
 * One part of a JWT decoded (0: the header, 1: the claims), unverified; undefined for anything that is not a JWT.
 * Only for routing a token (which key, whose token, until when): what a token proves comes from its verification.
 */
export function jwtPart(token: string, index: 0 | 1): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const part: unknown = JSON.parse(Buffer.from(parts[index], 'base64url').toString('utf8'));
    return part && typeof part === 'object' ? (part as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a bearer token claims to be an app token (signed or not): those are never asked of orgs-teams. */
export function isAppToken(token: string): boolean {
  return jwtPart(token, 1)?.iss === APP_TOKEN_ISSUER;
}

let processCredential: AppCredential | undefined;
let configuredKeys: string | undefined;

/**
 * Sets this process's app credential from PLATFORM_APP_KEYS, once: every app of the process must be given the
 * same keys (the one-process launcher passes one environment to all). Without keys, a key of the process's own.
 */
export function useAppKeys(keys: string[] | undefined, app: string): AppCredential {
  const given = keys?.join(',');
  if (processCredential) {
    if (given !== undefined && configuredKeys !== undefined && given !== configuredKeys)
      throw new ConfigError(['PLATFORM_APP_KEYS: every app of one process must be given the same keys']);
    if (given === undefined || configuredKeys !== undefined) return processCredential;
  }
  processCredential = AppCredential.create(keys, keys?.length ? app : 'platform');
  configuredKeys = given;
  return processCredential;
}

/** This process's app credential (a key of its own until useAppKeys is called with the release's keys). */
export function appCredential(): AppCredential {
  return (processCredential ??= AppCredential.create(undefined, 'platform'));
}
