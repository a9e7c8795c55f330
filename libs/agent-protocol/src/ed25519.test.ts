import { createAccount, createUser, fromPublic, fromSeed } from 'nkeys.js';
import { newUserKeys, rawUserPublicKey, signerOf, verifySignature } from './ed25519';

describe('Ed25519 with nkey user keys', () => {
  const data = new TextEncoder().encode('platform.agent.v1\nsome bytes to sign');

  it('signs what nkeys.js verifies, and verifies what nkeys.js signs', () => {
    for (let i = 0; i < 5; i++) {
      const keys = createUser();
      const signer = signerOf(keys);
      expect(signer.publicKey).toBe(keys.getPublicKey());
      const ours = signer.sign(data);
      expect(fromPublic(keys.getPublicKey()).verify(data, ours)).toBe(true);
      // Ed25519 is deterministic: the same key and data give the same signature.
      expect(Buffer.from(ours)).toEqual(Buffer.from(keys.sign(data)));
      expect(verifySignature(keys.getPublicKey(), data, keys.sign(data))).toBe(true);
    }
  });

  it('makes the same signer from the seed as text, as bytes and as a key pair', () => {
    const keys = createUser();
    const seedText = new TextDecoder().decode(keys.getSeed());
    const sigs = [signerOf(seedText), signerOf(keys.getSeed()), signerOf(keys)].map((s) => Buffer.from(s.sign(data)).toString('hex'));
    expect(new Set(sigs).size).toBe(1);
  });

  it('rejects other data, another key, a changed signature', () => {
    const keys = createUser();
    const sig = signerOf(keys).sign(data);
    expect(verifySignature(keys.getPublicKey(), new TextEncoder().encode('other'), sig)).toBe(false);
    expect(verifySignature(createUser().getPublicKey(), data, sig)).toBe(false);
    const changed = new Uint8Array(sig);
    changed[63] ^= 0x80;
    expect(verifySignature(keys.getPublicKey(), data, changed)).toBe(false);
  });

  it('refuses keys that are not nkey user keys', () => {
    expect(() => rawUserPublicKey(createAccount().getPublicKey())).toThrow();
    const pub = createUser().getPublicKey();
    expect(() => rawUserPublicKey(pub.slice(0, -2) + (pub.endsWith('AA') ? 'BB' : 'AA'))).toThrow();
    expect(() => signerOf(createAccount())).toThrow(/user seed/);
    expect(rawUserPublicKey(pub)).toHaveLength(32);
  });

  it("makes new key pairs that nkeys.js reads as its own: the seed's public key is the one given, and it verifies", () => {
    for (let i = 0; i < 5; i++) {
      const { seed, publicKey } = newUserKeys();
      expect(seed).toMatch(/^SU[A-Z2-7]{56}$/);
      expect(publicKey).toMatch(/^U[A-Z2-7]{55}$/);
      const theirs = fromSeed(new TextEncoder().encode(seed));
      expect(theirs.getPublicKey()).toBe(publicKey);
      expect(signerOf(seed).publicKey).toBe(publicKey);
      expect(fromPublic(publicKey).verify(data, signerOf(seed).sign(data))).toBe(true);
    }
    expect(newUserKeys().seed).not.toBe(newUserKeys().seed);
  });
});
