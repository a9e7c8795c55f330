import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileObjectStorage } from './file-storage';
import { openObjectStorage, objectStorageEnv } from './config';
import { loadConfig } from '@platform/service-kit';

describe('FileObjectStorage (embedded, DATA_DIR/objects)', () => {
  let dir: string;
  let storage: FileObjectStorage;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'objects-'));
    storage = new FileObjectStorage(dir);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('stores, reads back with the content type, replaces and deletes by key', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 0x0a, 0xff]);
    await storage.put('avatars/org/1/a.png', png, 'image/png');
    expect(await storage.get('avatars/org/1/a.png')).toEqual({ body: png, contentType: 'image/png' });
    // Each key is a file under the root, named after the key's segments.
    expect(fs.existsSync(path.join(dir, 'avatars', 'org', '1', 'a.png'))).toBe(true);

    await storage.put('avatars/org/1/a.png', Buffer.from('GIF89a'), 'image/gif');
    expect(await storage.get('avatars/org/1/a.png')).toEqual({ body: Buffer.from('GIF89a'), contentType: 'image/gif' });

    await storage.delete('avatars/org/1/a.png');
    expect(await storage.get('avatars/org/1/a.png')).toBeUndefined();
    await expect(storage.delete('avatars/org/1/a.png')).resolves.toBeUndefined();
  });

  it('answers undefined for a key never stored and keeps empty objects', async () => {
    expect(await storage.get('nothing/here')).toBeUndefined();
    await storage.put('empty', Buffer.alloc(0), 'application/octet-stream');
    expect(await storage.get('empty')).toEqual({ body: Buffer.alloc(0), contentType: 'application/octet-stream' });
  });

  it('refuses keys that could escape the root or hide files, and bad content types', async () => {
    for (const key of ['../etc/passwd', '/abs', 'a//b', 'a/../b', '.hidden', 'a/.b', 'a b', 'a\nb', '', 'x'.repeat(513)]) {
      await expect(storage.put(key, Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid object key/);
      await expect(storage.get(key)).rejects.toThrow(/invalid object key/);
    }
    await expect(storage.put('k', Buffer.from('x'), 'text/plain\nx: y')).rejects.toThrow(/invalid content type/);
    await expect(storage.put('k', Buffer.from('x'), 'nonsense')).rejects.toThrow(/invalid content type/);
  });

  it('publishes whole objects only: concurrent writers leave one complete version and no temporary files', async () => {
    const versions = Array.from({ length: 20 }, (_, i) => Buffer.alloc(64 * 1024, i));
    await Promise.all(versions.map((v) => storage.put('race/obj', v, 'application/octet-stream')));
    const got = await storage.get('race/obj');
    expect(versions.some((v) => v.equals(got!.body))).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'race'))).toEqual(['obj']);
  });

  it('is what openObjectStorage picks without OBJECT_STORAGE_URL, under DATA_DIR/objects', async () => {
    const config = { ...loadConfig(objectStorageEnv, {}), DATA_DIR: dir };
    const chosen = openObjectStorage(config);
    expect(chosen).toBeInstanceOf(FileObjectStorage);
    expect(chosen.description).toBe(path.join(dir, 'objects'));
    await chosen.put('k', Buffer.from('v'), 'text/plain');
    expect(fs.existsSync(path.join(dir, 'objects', 'k'))).toBe(true);
  });
});
