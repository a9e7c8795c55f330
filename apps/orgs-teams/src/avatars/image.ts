/** An image type recognised by its bytes, never by what the client claims. */
export type ImageType = 'png' | 'jpeg' | 'gif' | 'webp' | 'ico' | 'svg';

export const MIME_OF: Record<ImageType, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  ico: 'image/x-icon',
  svg: 'image/svg+xml',
};

export const EXTENSION_OF: Record<ImageType, string> = { png: 'png', jpeg: 'jpg', gif: 'gif', webp: 'webp', ico: 'ico', svg: 'svg' };

/** What the bytes are and, for raster images, their pixel size (0 when the format does not say). */
export interface SniffedImage {
  type: ImageType;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Recognises PNG, JPEG, GIF, WebP, ICO and SVG by their magic bytes and reads their size; undefined otherwise. */
export function sniffImage(b: Buffer): SniffedImage | undefined {
  if (b.length >= 24 && b.subarray(0, 8).equals(PNG_SIGNATURE) && b.toString('latin1', 12, 16) === 'IHDR') {
    return { type: 'png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  if (b.length >= 10 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) {
    return { type: 'gif', width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return jpeg(b);
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webp(b);
  if (b.length >= 22 && b.readUInt32BE(0) === 0x00000100 && b.readUInt16LE(4) > 0) {
    // ICONDIR, then the first ICONDIRENTRY: a width or height byte of 0 means 256.
    return { type: 'ico', width: b[6] || 256, height: b[7] || 256 };
  }
  if (isSvg(b)) return { type: 'svg', width: 0, height: 0 };
  return undefined;
}

// Start-of-frame markers carry the size: C0-C3, C5-C7, C9-CB, CD-CF.
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpeg(b: Buffer): SniffedImage | undefined {
  let i = 2;
  while (i + 3 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1];
    if (marker === 0xff) {
      i += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2; // markers without a length
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // end of image or scan data before any frame header
    const length = b.readUInt16BE(i + 2);
    if (SOF.has(marker)) {
      if (i + 8 >= b.length) return undefined;
      return { type: 'jpeg', height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
    }
    if (length < 2) return undefined;
    i += 2 + length;
  }
  return undefined;
}

function webp(b: Buffer): SniffedImage | undefined {
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ' && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) {
    return { type: 'webp', width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  }
  if (chunk === 'VP8L' && b[20] === 0x2f) {
    const bits = b.readUInt32LE(21);
    return { type: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') return { type: 'webp', width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  return undefined;
}

function isSvg(b: Buffer): boolean {
  const head = b
    .toString('utf8', 0, Math.min(b.length, 1024))
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (!/^<(\?xml|svg[\s>]|!--|!DOCTYPE svg)/i.test(head)) return false;
  return /<svg[\s>]/i.test(b.toString('utf8'));
}

/**
 * Whether an SVG is free of active content. Images in data URIs do not run scripts when shown with <img>,
 * but a branding logo may be inlined by a client, so scripts, event handlers, javascript: URLs and
 * embedded foreign content are refused outright rather than sanitised.
 */
export function isInertSvg(b: Buffer): boolean {
  const text = b.toString('utf8');
  return !/<script|<foreignObject|\son[a-z]+\s*=|javascript:|<!ENTITY/i.test(text);
}
