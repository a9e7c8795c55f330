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

  it('changes nothing when the object storage fails, and removes the stored image of a deleted organization', async () => {
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

    // Deleting the organization: its stored image goes once the account row (and its avatar row) is gone.
    const staged = await stagedByOrgDelete(avatars, org);
    await db.table('accounts').where({ id: org }).delete();
    expect(objectFiles(org)).toEqual([path.basename(ok.objectKey)]);
    for (const key of staged) await avatars.discardUnused(org, key);
    expect(objectFiles(org)).toEqual([]);
  });

  /** The object keys an organization's deletion stages for discarding (its outbox effects). */
  async function stagedByOrgDelete(of: Avatars, orgId: number): Promise<string[]> {
    const keys: string[] = [];
    await db.transaction((trx) => of.onOrgDelete(trx, orgId, (_kind, payload) => keys.push((payload as { key: string }).key)));
    return keys;
  }

  /** The file storage with hooks, each run once for its key: after a put is stored, before a delete reaches the store. */
  function hookedStorage(hooks: { beforeDelete?: Record<string, () => Promise<void>>; afterPut?: Record<string, () => Promise<void>> }) {
    const once = (table: Record<string, () => Promise<void>> | undefined, key: string) => {
      const hook = table?.[key];
      if (table) delete table[key];
      return hook?.();
    };
    const hooked: ObjectStorage = {
      description: 'hooked',
      put: async (k, body, type) => {
        await storage.put(k, body, type);
        await once(hooks.afterPut, k);
      },
      get: (k) => storage.get(k),
      delete: async (k) => {
        await once(hooks.beforeDelete, k);
        await storage.delete(k);
      },
      close: () => {},
    };
    return hooked;
  }

  it('never calls the object storage while a database transaction is open (decision D6)', async () => {
    const org = await newOrg('one-connection');
    let open = 0;
    const tracked: Database = {
      ...db,
      transaction: async (fn) => {
        open += 1;
        try {
          return await db.transaction(fn);
        } finally {
          open -= 1;
        }
      },
    };
    const calls: string[] = [];
    /** Records a call, failing the test when a transaction is open in this process or in any session of the database. */
    const check = async (op: string) => {
      const [{ n }] = (
        await db.knex.raw(
          `select count(*)::int as n from pg_stat_activity
            where datname = current_database() and pid <> pg_backend_pid() and state like 'idle in transaction%'`,
        )
      ).rows;
      calls.push(`${op}${open > 0 || n > 0 ? ' IN A TRANSACTION' : ''}`);
    };
    const probing: ObjectStorage = {
      description: 'probing',
      put: async (k, body, type) => (await check('put'), storage.put(k, body, type)),
      get: async (k) => (await check('get'), storage.get(k)),
      delete: async (k) => (await check('delete'), storage.delete(k)),
      close: () => {},
    };
    const probed = new Avatars(tracked, probing, { maxBytes: MAX }, log);
    const upload = (variant: number) =>
      probed.update({ orgId: org, source: '', image: png(variant), gravatar: '', federavatar: false, userId });

    await upload(31);
    await upload(31); // the same image again
    await upload(32); // replaces the first, which is deleted
    await probed.update({ orgId: org, source: 'lookup', image: Buffer.alloc(0), gravatar: 'x@example.com', federavatar: false, userId });
    await upload(33);
    await probed.delete(org);
    await upload(34);
    const staged = await stagedByOrgDelete(probed, org);
    await db.table('org_avatars').where({ org_id: org }).delete(); // as the organization's deletion cascades
    for (const key of staged) await probed.discardUnused(org, key);
    // A swap that fails deletes its upload again.
    const failing: Database = {
      ...tracked,
      transaction: async () => {
        failing.transaction = tracked.transaction;
        return tracked.transaction(async () => {
          throw new Error('connection lost');
        });
      },
    };
    await expect(
      new Avatars(failing, probing, { maxBytes: MAX }, log).update({
        orgId: org,
        source: '',
        image: png(35),
        gravatar: '',
        federavatar: false,
        userId,
      }),
    ).rejects.toThrow('connection lost');

    expect(calls.filter((c) => c.endsWith('IN A TRANSACTION'))).toEqual([]);
    expect(new Set(calls)).toEqual(new Set(['put', 'get', 'delete']));
    expect(objectFiles(org)).toEqual([]);
  });

  it('deletes an upload whose swap failed, unless the avatar already is that image', async () => {
    const org = await newOrg('half-done');
    const current = await avatars.update({ orgId: org, source: '', image: png(41), gravatar: '', federavatar: false, userId });
    const failOnce = (): Database => {
      const failing: Database = {
        ...db,
        transaction: async () => {
          failing.transaction = db.transaction;
          throw new Error('connection lost');
        },
      };
      return failing;
    };
    for (const image of [png(42), png(41)]) {
      const broken = new Avatars(failOnce(), storage, { maxBytes: MAX }, log);
      await expect(broken.update({ orgId: org, source: '', image, gravatar: '', federavatar: false, userId })).rejects.toThrow(
        'connection lost',
      );
      expect(await avatars.get(org)).toEqual(current);
      expect(objectFiles(org)).toEqual([path.basename(current.objectKey)]);
    }
  });

  it('puts an image back that a clean-up deleted while an upload of the same image made it current again', async () => {
    const org = await newOrg('deja-vu');
    const a = await avatars.update({ orgId: org, source: '', image: png(51), gravatar: '', federavatar: false, userId });
    // Replacing A by B deletes A after the swap; just before that deletion, A is uploaded again and committed.
    const racing = new Avatars(
      db,
      hookedStorage({
        beforeDelete: {
          [a.objectKey]: async () => {
            await avatars.update({ orgId: org, source: '', image: png(51), gravatar: '', federavatar: false, userId });
          },
        },
      }),
      { maxBytes: MAX },
      log,
    );
    await racing.update({ orgId: org, source: '', image: png(52), gravatar: '', federavatar: false, userId });
    expect((await avatars.get(org)).objectKey).toBe(a.objectKey);
    expect(Buffer.from((await avatars.object(a.objectKey)).body).equals(png(51))).toBe(true);
    expect(objectFiles(org)).toEqual([path.basename(a.objectKey)]);
  });

  it('puts its upload back when a clean-up of the same key deleted it before the swap committed', async () => {
    const org = await newOrg('late-swap');
    const a = await avatars.update({ orgId: org, source: '', image: png(61), gravatar: '', federavatar: false, userId });
    // A is uploaded again; before its swap, another request replaces A by B and deletes A's object.
    const racing = new Avatars(
      db,
      hookedStorage({
        afterPut: {
          [a.objectKey]: async () => {
            await avatars.update({ orgId: org, source: '', image: png(62), gravatar: '', federavatar: false, userId });
            expect(objectFiles(org)).not.toContain(path.basename(a.objectKey));
          },
        },
      }),
      { maxBytes: MAX },
      log,
    );
    await racing.update({ orgId: org, source: '', image: png(61), gravatar: '', federavatar: false, userId });
    expect((await avatars.get(org)).objectKey).toBe(a.objectKey);
    expect(Buffer.from((await avatars.object(a.objectKey)).body).equals(png(61))).toBe(true);
    expect(objectFiles(org)).toEqual([path.basename(a.objectKey)]);
  });
});
