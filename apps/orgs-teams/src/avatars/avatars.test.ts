import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, type Database } from '@platform/db';
import { InputError, NotFoundError, ValidationError } from '@platform/errors';
import { FileObjectStorage, type ObjectStorage } from '@platform/object-storage';
import { createLogger } from '@platform/service-kit';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../../migrations';
import { Avatars, defaultAvatarKey, lookupUrl } from './avatars';
import { identiconPng } from './identicon';
import { samples } from './test-images';

const MAX = 64 * 1024;
const log = createLogger('avatars-test', 'silent');

/** A real, decodable 1×1 PNG; `variant` changes its bytes (a trailing comment chunk) but not its type. */
function png(variant = 0): Buffer {
  const base = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  return variant ? Buffer.concat([base, Buffer.from(`variant ${variant}`)]) : base;
}

describe('Avatars (identity schema on real Postgres, files as object storage)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let dir: string;
  let storage: FileObjectStorage;
  let avatars: Avatars;
  let orgId: number;
  let userId: number;

  const objectFiles = (org: number) => {
    const d = path.join(dir, 'avatars', 'org', String(org));
    return fs.existsSync(d) ? fs.readdirSync(d).sort() : [];
  };
  const newOrg = async (login: string) => {
    const [row] = await db.table('accounts').insert({ type: 1, login, lower_login: login.toLowerCase() }).returning('id');
    return row.id as number;
  };

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'identity' });
    await db.migrate(migrations);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'avatars-'));
    storage = new FileObjectStorage(dir);
    avatars = new Avatars(db, storage, { maxBytes: MAX }, log);
    orgId = await newOrg('acme');
    const [user] = await db.table('accounts').insert({ type: 0, login: 'alice', lower_login: 'alice', email: 'a@x.io' }).returning('id');
    userId = user.id;
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gives an organization without an avatar its generated identicon, served by key', async () => {
    const avatar = await avatars.get(orgId);
    expect(avatar).toEqual({ orgId, source: 'default', objectKey: `avatars/default/${orgId}.png`, externalUrl: '', updatedUnix: 0 });
    const object = await avatars.object(avatar.objectKey);
    expect(object.contentType).toBe('image/png');
    expect(Buffer.from(object.body).equals(identiconPng(`organization:${orgId}`))).toBe(true);
  });

  it('answers 404 for accounts that are not organizations and for unknown keys', async () => {
    await expect(avatars.get(userId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(avatars.get(999999)).rejects.toBeInstanceOf(NotFoundError);
    await expect(avatars.object(defaultAvatarKey(userId))).rejects.toBeInstanceOf(NotFoundError);
    await expect(avatars.object(`avatars/org/${orgId}/${'0'.repeat(32)}.png`)).rejects.toBeInstanceOf(NotFoundError);
    await expect(avatars.object('contracts/1/doc.pdf')).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      avatars.update({ orgId: 999999, source: '', image: png(), gravatar: '', federavatar: false, userId }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('stores an upload under a content-addressed key and serves exactly its bytes', async () => {
    const image = png(1);
    const avatar = await avatars.update({ orgId, source: '', image, gravatar: '', federavatar: false, userId });
    const digest = createHash('sha256').update(image).digest('hex').slice(0, 32);
    expect(avatar).toMatchObject({ orgId, source: 'local', objectKey: `avatars/org/${orgId}/${digest}.png`, externalUrl: '' });
    expect(avatar.updatedUnix).toBeGreaterThan(0);
    expect(await avatars.get(orgId)).toEqual(avatar);
    const object = await avatars.object(avatar.objectKey);
    expect({ ...object, body: Buffer.from(object.body) }).toEqual({ body: image, contentType: 'image/png' });
    expect(objectFiles(orgId)).toEqual([`${digest}.png`]);
  });

  it('deletes the replaced image, keeps a re-uploaded identical one, and stops serving the old key', async () => {
    const first = await avatars.update({ orgId, source: 'local', image: png(2), gravatar: '', federavatar: false, userId });
    const again = await avatars.update({ orgId, source: 'local', image: png(2), gravatar: '', federavatar: false, userId });
    expect(again.objectKey).toBe(first.objectKey);
    expect(objectFiles(orgId)).toEqual([path.basename(first.objectKey)]);

    const gif = samples.gif(16, 16);
    const second = await avatars.update({ orgId, source: 'local', image: gif, gravatar: '', federavatar: false, userId });
    expect(second.objectKey).toMatch(/\.gif$/);
    expect(objectFiles(orgId)).toEqual([path.basename(second.objectKey)]);
    await expect(avatars.object(first.objectKey)).rejects.toBeInstanceOf(NotFoundError);
    expect((await avatars.object(second.objectKey)).contentType).toBe('image/gif');
  });

  it('accepts PNG, JPEG, GIF and WebP by their bytes whatever the client claimed, and refuses the rest', async () => {
    for (const [image, type] of [
      [samples.jpeg(100, 80), 'image/jpeg'],
      [samples.webpLossy(64, 64), 'image/webp'],
      [samples.webpLossless(64, 64), 'image/webp'],
    ] as const) {
      const a = await avatars.update({ orgId, source: '', image, gravatar: '', federavatar: false, userId });
      expect((await avatars.object(a.objectKey)).contentType).toBe(type);
    }
    const before = await avatars.get(orgId);
    const refused: [Buffer, unknown, RegExp][] = [
      [Buffer.from('just text, named avatar.png'), ValidationError, /not a PNG, JPEG, GIF or WebP/],
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), ValidationError, /not a PNG, JPEG, GIF or WebP/],
      [Buffer.from([0, 0, 1, 0, 1, 0, 16, 16, ...Array(14).fill(0)]), ValidationError, /not a PNG, JPEG, GIF or WebP/],
      [Buffer.concat([png(), Buffer.alloc(MAX)]), InputError, /larger than 65536 bytes/],
      [samples.webpLossless(5000, 10), InputError, /between 1 and 4096 pixels/],
      [samples.gif(0, 10), InputError, /between 1 and 4096 pixels/],
    ];
    for (const [image, kind, message] of refused) {
      const err = await avatars.update({ orgId, source: 'local', image, gravatar: '', federavatar: false, userId }).catch((e) => e);
      expect(err).toBeInstanceOf(kind);
      expect(err.message).toMatch(message);
    }
    expect(await avatars.get(orgId)).toEqual(before);
    expect(objectFiles(orgId)).toEqual([path.basename(before.objectKey)]);
  });

  it('switches to a Gravatar or Libravatar lookup, deleting the stored image', async () => {
    const lookup = await avatars.update({
      orgId,
      source: 'lookup',
      image: png(),
      gravatar: ' Team@Example.com ',
      federavatar: false,
      userId,
    });
    const md5 = createHash('md5').update('team@example.com').digest('hex');
    expect(lookup).toMatchObject({ source: 'lookup', objectKey: '', externalUrl: `https://secure.gravatar.com/avatar/${md5}?d=identicon` });
    expect(objectFiles(orgId)).toEqual([]);
    const fed = await avatars.update({
      orgId,
      source: '',
      image: Buffer.alloc(0),
      gravatar: 'team@example.com',
      federavatar: true,
      userId,
    });
    expect(fed.externalUrl).toBe(lookupUrl('team@example.com', true));
    expect(fed.externalUrl).toMatch(/^https:\/\/seccdn\.libravatar\.org\/avatar\//);
  });

  it('refuses incomplete or contradictory forms with 422', async () => {
    const cases: [Partial<Parameters<Avatars['update']>[0]>, RegExp][] = [
      [{}, /send an avatar file, or a gravatar email/],
      [{ source: 'local' }, /image file is required with source=local/],
      [{ source: 'lookup' }, /email address to look up is required/],
      [{ source: 'lookup', gravatar: 'not-an-email' }, /email address/],
      [{ source: 'remote', image: png() }, /source: must be "local" or "lookup"/],
    ];
    for (const [req, message] of cases) {
      const err = await avatars
        .update({ orgId, source: '', image: Buffer.alloc(0), gravatar: '', federavatar: false, userId, ...req })
        .catch((e) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toMatch(message);
    }
  });

  it('deletes back to the default, removing the stored image; deleting again is harmless', async () => {
    const up = await avatars.update({ orgId, source: '', image: png(3), gravatar: '', federavatar: false, userId });
    expect(objectFiles(orgId)).toHaveLength(1);
    const deleted = await avatars.delete(orgId);
    expect(deleted).toEqual({ orgId, source: 'default', objectKey: defaultAvatarKey(orgId), externalUrl: '', updatedUnix: 0 });
    expect(objectFiles(orgId)).toEqual([]);
    await expect(avatars.object(up.objectKey)).rejects.toBeInstanceOf(NotFoundError);
    expect(await avatars.delete(orgId)).toEqual(deleted);
    await expect(avatars.delete(999999)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('leaves exactly the winning image behind when uploads race', async () => {
    const org = await newOrg('racing');
    const results = await Promise.all(
      [11, 12, 13, 14, 15].map((v) => avatars.update({ orgId: org, source: '', image: png(v), gravatar: '', federavatar: false, userId })),
    );
    const final = await avatars.get(org);
    expect(results.map((r) => r.objectKey)).toContain(final.objectKey);
    expect(objectFiles(org)).toEqual([path.basename(final.objectKey)]);
  });

  it('changes nothing when the object storage fails, and purges an organization completely', async () => {
    const org = await newOrg('fragile');
    const ok = await avatars.update({ orgId: org, source: '', image: png(21), gravatar: '', federavatar: false, userId });
    const failing: ObjectStorage = {
      description: 'failing',
      put: async () => {
        throw new Error('disk full');
      },
      get: (k) => storage.get(k),
      delete: (k) => storage.delete(k),
      close: () => {},
    };
    const broken = new Avatars(db, failing, { maxBytes: MAX }, log);
    await expect(broken.update({ orgId: org, source: '', image: png(22), gravatar: '', federavatar: false, userId })).rejects.toThrow(
      'disk full',
    );
    expect(await avatars.get(org)).toEqual(ok);
    expect(objectFiles(org)).toEqual([path.basename(ok.objectKey)]);

    await avatars.purge(org);
    expect(objectFiles(org)).toEqual([]);
    expect((await avatars.get(org)).source).toBe('default');
  });
});
