import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

const GRID = 5;
const CELL = 40;
const MARGIN = 20;
export const IDENTICON_SIZE = GRID * CELL + 2 * MARGIN; // 240 px

/**
 * The generated default avatar of an account: a 5×5 mirrored pattern in one colour on a light background,
 * derived from a seed (the organization id), as a PNG. The same seed always gives the same bytes.
 */
export function identiconPng(seed: string): Buffer {
  const hash = createHash('sha256').update(seed).digest();
  const [r, g, b] = hslToRgb((hash[0] / 255) * 360, 0.55, 0.5);
  const bg = [240, 240, 240];
  // Columns 0..2 come from the hash bits; columns 3 and 4 mirror 1 and 0.
  const on = (row: number, col: number) => {
    const c = col < 3 ? col : GRID - 1 - col;
    const bit = row * 3 + c;
    return (hash[1 + (bit >> 3)] >> (bit & 7)) & 1;
  };
  const rowBytes = 1 + IDENTICON_SIZE * 3;
  const raw = Buffer.alloc(rowBytes * IDENTICON_SIZE);
  for (let y = 0; y < IDENTICON_SIZE; y++) {
    raw[y * rowBytes] = 0; // filter: none
    for (let x = 0; x < IDENTICON_SIZE; x++) {
      const inGrid = x >= MARGIN && y >= MARGIN && x < MARGIN + GRID * CELL && y < MARGIN + GRID * CELL;
      const filled = inGrid && on(Math.floor((y - MARGIN) / CELL), Math.floor((x - MARGIN) / CELL));
      const px = filled ? [r, g, b] : bg;
      raw.set(px, y * rowBytes + 1 + x * 3);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(IDENTICON_SIZE, 0);
  ihdr.writeUInt32BE(IDENTICON_SIZE, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const c = (1 - Math.abs(2 * l - 1)) * s;
  const x = c * (1 - Math.abs(((h / 60) % 2) - 1));
  const m = l - c / 2;
  const [r, g, b] = h < 60 ? [c, x, 0] : h < 120 ? [x, c, 0] : h < 180 ? [0, c, x] : h < 240 ? [0, x, c] : h < 300 ? [x, 0, c] : [c, 0, x];
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}
