import { inflateSync, crc32 } from 'node:zlib';
import { identiconPng, IDENTICON_SIZE } from './identicon';
import { isInertSvg, sniffImage } from './image';
import { samples } from './test-images';

describe('sniffImage', () => {
  it('recognises each format by its bytes and reads its size', () => {
    expect(sniffImage(identiconPng('x'))).toEqual({ type: 'png', width: IDENTICON_SIZE, height: IDENTICON_SIZE });
    expect(sniffImage(samples.gif(33, 17))).toEqual({ type: 'gif', width: 33, height: 17 });
    expect(sniffImage(samples.jpeg(640, 480))).toEqual({ type: 'jpeg', width: 640, height: 480 });
    expect(sniffImage(samples.webpLossy(300, 200))).toEqual({ type: 'webp', width: 300, height: 200 });
    expect(sniffImage(samples.webpLossless(5000, 7))).toEqual({ type: 'webp', width: 5000, height: 7 });
    expect(sniffImage(samples.webpExtended(4097, 2))).toEqual({ type: 'webp', width: 4097, height: 2 });
    expect(sniffImage(Buffer.from([0, 0, 1, 0, 1, 0, 0, 0, ...Array(14).fill(0)]))).toEqual({ type: 'ico', width: 256, height: 256 });
    expect(sniffImage(Buffer.from('\uFEFF  <svg xmlns="http://www.w3.org/2000/svg"></svg>'))).toEqual({ type: 'svg', width: 0, height: 0 });
  });

  it('recognises nothing else, whatever a file claims to be', () => {
    for (const b of [
      Buffer.from('hello'),
      Buffer.from('<html><body>x</body></html>'),
      Buffer.from('%PDF-1.7'),
      Buffer.from([0x89, 0x50, 0x4e, 0x47]), // a truncated PNG signature
      Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2]), // JPEG scan data before any frame header
      Buffer.alloc(0),
    ]) {
      expect(sniffImage(b)).toBeUndefined();
    }
  });

  it('tells inert SVG from SVG with active content', () => {
    expect(isInertSvg(Buffer.from('<svg><rect/></svg>'))).toBe(true);
    for (const svg of [
      '<svg><script/></svg>',
      '<svg onload="x()"/>',
      '<svg><a href="javascript:x()"/></svg>',
      '<svg><foreignObject/></svg>',
    ]) {
      expect(isInertSvg(Buffer.from(svg))).toBe(false);
    }
  });
});

describe('identiconPng', () => {
  it('is a well-formed PNG (chunk CRCs, inflatable pixels) that depends only on its seed', () => {
    const png = identiconPng('organization:42');
    expect(png.equals(identiconPng('organization:42'))).toBe(true);
    expect(png.equals(identiconPng('organization:43'))).toBe(false);
    let at = 8;
    const types: string[] = [];
    let idat = Buffer.alloc(0);
    while (at < png.length) {
      const len = png.readUInt32BE(at);
      const type = png.toString('latin1', at + 4, at + 8);
      const data = png.subarray(at + 8, at + 8 + len);
      expect(png.readUInt32BE(at + 8 + len)).toBe(crc32(png.subarray(at + 4, at + 8 + len)) >>> 0);
      types.push(type);
      if (type === 'IDAT') idat = Buffer.concat([idat, data]);
      at += 12 + len;
    }
    expect(types).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(inflateSync(idat).length).toBe(IDENTICON_SIZE * (1 + IDENTICON_SIZE * 3));
  });
});
