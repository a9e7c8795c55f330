// Image headers for the avatar and branding tests (only tests import this file).

/** Minimal headers of each format, as real encoders write them. */
export const samples = {
  gif: (w: number, h: number) => {
    const b = Buffer.alloc(13);
    b.write('GIF89a', 0, 'latin1');
    b.writeUInt16LE(w, 6);
    b.writeUInt16LE(h, 8);
    return b;
  },
  jpeg: (w: number, h: number) =>
    Buffer.concat([
      Buffer.from([0xff, 0xd8]),
      // APP0 JFIF segment (length 16), then a baseline SOF0 (length 17) with height and width.
      Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
      Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, h >> 8, h & 0xff, w >> 8, w & 0xff, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]),
      Buffer.from([0xff, 0xd9]),
    ]),
  webpLossy: (w: number, h: number) => {
    const b = Buffer.alloc(30);
    b.write('RIFF', 0, 'latin1');
    b.writeUInt32LE(22, 4);
    b.write('WEBPVP8 ', 8, 'latin1');
    b.writeUInt32LE(10, 16);
    b.set([0x9d, 0x01, 0x2a], 23);
    b.writeUInt16LE(w, 26);
    b.writeUInt16LE(h, 28);
    return b;
  },
  webpLossless: (w: number, h: number) => {
    const b = Buffer.alloc(30);
    b.write('RIFF', 0, 'latin1');
    b.write('WEBPVP8L', 8, 'latin1');
    b[20] = 0x2f;
    b.writeUInt32LE(((w - 1) & 0x3fff) | (((h - 1) & 0x3fff) << 14), 21);
    return b;
  },
  webpExtended: (w: number, h: number) => {
    const b = Buffer.alloc(30);
    b.write('RIFF', 0, 'latin1');
    b.write('WEBPVP8X', 8, 'latin1');
    b.writeUIntLE(w - 1, 24, 3);
    b.writeUIntLE(h - 1, 27, 3);
    return b;
  },
};
