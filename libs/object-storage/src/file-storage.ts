import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { assertValidContentType, assertValidKey, type ObjectStorage, type StoredObject } from './object-storage';

// One file per object holds its content type and its bytes, so a single rename publishes both:
//   "PLOBJ1\n" <content type> "\n" <bytes>
const MAGIC = Buffer.from('PLOBJ1\n');

/**
 * The embedded object storage: one file per key under a root directory (DATA_DIR/objects). A put writes a
 * temporary file beside the target, flushes it and renames it over the target, so readers see the old
 * object or the new one, never a partial one, and a crash leaves at most a stray temporary file.
 */
export class FileObjectStorage implements ObjectStorage {
  readonly description: string;

  constructor(private readonly root: string) {
    this.description = path.resolve(root);
  }

  private fileOf(key: string): string {
    assertValidKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Buffer, contentType: string): Promise<void> {
    const file = this.fileOf(key);
    assertValidContentType(contentType);
    await fs.mkdir(path.dirname(file), { recursive: true });
    // Key segments never start with '.', so a temporary name cannot collide with an object.
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await fs.open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(Buffer.concat([MAGIC, Buffer.from(`${contentType}\n`), body]));
      await handle.sync();
    } catch (err) {
      await handle.close();
      await fs.rm(tmp, { force: true });
      throw err;
    }
    await handle.close();
    try {
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<StoredObject | undefined> {
    let data: Buffer;
    try {
      data = await fs.readFile(this.fileOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const end = data.indexOf(0x0a, MAGIC.length);
    if (!data.subarray(0, MAGIC.length).equals(MAGIC) || end < 0) throw new Error(`object ${key} is not in the embedded object format`);
    return { contentType: data.subarray(MAGIC.length, end).toString('utf8'), body: data.subarray(end + 1) };
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.fileOf(key), { force: true });
  }

  close(): void {}
}
