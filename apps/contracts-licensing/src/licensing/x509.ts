// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

export { x509 };

/** ECDSA P-256 with SHA-256: the one algorithm of the platform CA (docs/decisions.md D28). */
export const CA_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** DER bytes of a certificate or CRL given as DER, PEM or base64 of DER; undefined when it is none of them. */
export function derOf(input: Uint8Array | string): Uint8Array | undefined {
  if (typeof input !== 'string') {
    const text = Buffer.from(input.subarray(0, 64)).toString('latin1');
    // A file read as bytes may hold PEM or base64 text rather than DER (which starts with a SEQUENCE tag).
    if (input[0] === 0x30) return input;
    if (!/^[\s\x21-\x7e]*$/.test(text)) return undefined;
    return derOf(Buffer.from(input).toString('latin1'));
  }
  const text = input.trim();
  if (text.startsWith('-----BEGIN ')) {
    const body = /^-----BEGIN [A-Z0-9 ]+-----([\s\S]*?)-----END [A-Z0-9 ]+-----/.exec(text)?.[1];
    return body === undefined ? undefined : base64(body);
  }
  return base64(text);
}

/**
 * The DER of exactly one certificate given as DER, PEM or base64 of DER: undefined when anything follows it (bytes
 * after the DER, a second certificate, a PEM bundle) or it is none of them. A license is one certificate, so
 * anything more is not a license.
 */
export function soleDerOf(input: Uint8Array | string): Uint8Array | undefined {
  const text = typeof input === 'string' ? input : input[0] === 0x30 ? undefined : Buffer.from(input).toString('latin1');
  if (text !== undefined && text.trim().startsWith('-----BEGIN ')) {
    const blocks = text.match(/-----BEGIN [A-Z0-9 ]+-----/g) ?? [];
    const end = /-----END [A-Z0-9 ]+-----/.exec(text);
    if (blocks.length !== 1 || !end || text.slice(end.index + end[0].length).trim() !== '') return undefined;
  }
  const der = derOf(input);
  return der && derLength(der) === der.length ? der : undefined;
}

/** The length of the DER object at the start of `der` (tag, length and contents), or -1 when its length does not read. */
function derLength(der: Uint8Array): number {
  if (der.length < 2) return -1;
  const first = der[1];
  if (first < 0x80) return 2 + first;
  const octets = first & 0x7f;
  if (octets === 0 || octets > 4 || der.length < 2 + octets) return -1;
  let length = 0;
  for (let i = 0; i < octets; i++) length = length * 256 + der[2 + i];
  return 2 + octets + length;
}

function base64(text: string): Uint8Array | undefined {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact)) return undefined;
  const bytes = Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
  return bytes.length > 0 && bytes[0] === 0x30 ? new Uint8Array(bytes) : undefined;
}
