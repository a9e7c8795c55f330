import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';

/** The entries of a .tar.gz: name → { text, mode }. */
export async function readArchive(gz: Buffer): Promise<Record<string, { text: string; mode: number }>> {
  const out: Record<string, { text: string; mode: number }> = {};
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c) => chunks.push(c as Buffer));
      stream.on('end', () => {
        out[header.name] = { text: Buffer.concat(chunks).toString('utf8'), mode: header.mode ?? 0 };
        next();
      });
      stream.resume();
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  ex.end(gunzipSync(gz));
  await done;
  return out;
}
