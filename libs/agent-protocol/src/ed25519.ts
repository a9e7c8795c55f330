import { cacheMetrics, sizeOf } from '@platform/telemetry';
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Prefix, type KeyPair } from 'nkeys.js';
// nkeys.js' own codec (base32, prefix byte, CRC-16 checksum); the package exports no other way to the raw key.
import { Codec } from 'nkeys.js/lib/codec';

/**
 * Ed25519 for nkey user keys. nkeys.js decodes and checks the keys (prefix, checksum, seeds); the signature
 * arithmetic is Node's (OpenSSL), which signs and verifies the same RFC 8032 signatures as nkeys.js'
 * tweetnacl about a hundred times faster (a verification costs about 0.05 ms here against 5.7 ms), which the
 * ingestion of thousands of reports a second needs. Tests check both ways against nkeys.js' sign/verify.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** What precedes an Ed25519 seed in its PKCS #8 form (RFC 8410), so Node takes the bare 32 bytes as a private key. */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
/** Public keys already turned into key objects: a cluster signs every report with the same key. */
const publicKeys = new LRUCache<string, KeyObject>({ max: 10_000 });
const publicKeyLookups = cacheMetrics(sizeOf('agent-protocol.public-keys', publicKeys));

function b64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** The raw 32-byte key of an nkey user public key ("U..."); throws when its prefix or checksum is wrong. */
export function rawUserPublicKey(publicKey: string): Uint8Array {
  return Codec.decode(Prefix.User, encoder.encode(publicKey));
}

function publicKeyObject(publicKey: string): KeyObject {
  let key = publicKeys.get(publicKey);
  (key ? publicKeyLookups.hit : publicKeyLookups.miss).inc();
  if (!key) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(rawUserPublicKey(publicKey)) }, format: 'jwk' });
    publicKeys.set(publicKey, key);
  }
  return key;
}

/** Whether `signature` is the Ed25519 signature of `data` by the nkey user key `publicKey`; throws on a key out of form. */
export function verifySignature(publicKey: string, data: Uint8Array, signature: Uint8Array): boolean {
  return verify(null, data, publicKeyObject(publicKey), signature);
}

/**
 * `verifySignature` on libuv's thread pool (Node's callback form of `crypto.verify`): the event loop stays
 * free while a batch of reports is verified, and the verifications of a batch run on the other cores.
 * Rejects on a key out of form.
 */
export function verifySignatureAsync(publicKey: string, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  return new Promise((resolve, reject) => {
    try {
      verify(null, data, publicKeyObject(publicKey), signature, (err, ok) => (err ? reject(err) : resolve(ok)));
    } catch (err) {
      reject(err);
    }
  });
}

/** A signer made once from an nkey user seed ("SU..." text or bytes) or key pair. */
export interface Signer {
  readonly publicKey: string;
  sign(data: Uint8Array): Uint8Array;
}

export function signerOf(key: string | Uint8Array | KeyPair): Signer {
  const seed = typeof key === 'string' ? encoder.encode(key) : key instanceof Uint8Array ? key : key.getSeed();
  const decoded = Codec.decodeSeed(seed);
  if (decoded.prefix !== Prefix.User) throw new Error('the seed is not an nkey user seed');
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, decoded.buf]), format: 'der', type: 'pkcs8' });
  // The public key by Node's Ed25519 too: nkeys.js derives it in plain JavaScript, milliseconds at each ask.
  const publicKey = userPublicKeyOf(createPublicKey(privateKey));
  return { publicKey, sign: (data) => new Uint8Array(sign(null, data, privateKey)) };
}

/**
 * A new nkey user key pair, its seed ("SU...") and public key ("U...") as nkeys.js writes them, made by Node's
 * Ed25519 (nkeys.js' `createUser` and `getPublicKey` take about 10 ms of plain JavaScript between them).
 */
export function newUserKeys(): { seed: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const rawSeed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  return { seed: decoder.decode(Codec.encodeSeed(Prefix.User, rawSeed)), publicKey: userPublicKeyOf(publicKey) };
}

/** An Ed25519 public key as an nkey user public key ("U..."). */
function userPublicKeyOf(key: KeyObject): string {
  return decoder.decode(Codec.encode(Prefix.User, Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url')));
}
