import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { unixSeconds, type Database, type StageEffect } from '@platform/db';
import { InputError, NotFoundError, ValidationError } from '@platform/errors';
import type { ObjectStorage } from '@platform/object-storage';
import type { orgsTeamsAvatarsV1 } from '@platform/proto';
import type { Logger } from '@platform/service-kit';
import { ACCOUNT_TYPE } from '../identity/identity';
import { EFFECT } from '../orgs/effects';
import { identiconPng } from './identicon';
import { EXTENSION_OF, MIME_OF, sniffImage, type ImageType } from './image';

/** Image types an avatar may be, judged by the bytes. */
export const AVATAR_TYPES: readonly ImageType[] = ['png', 'jpeg', 'gif', 'webp'];
/** Gitea's AVATAR_MAX_WIDTH / AVATAR_MAX_HEIGHT. */
export const AVATAR_MAX_DIMENSION = 4096;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const LOCAL_KEY = /^avatars\/org\/([1-9]\d{0,17})\/[0-9a-f]{32}\.(png|jpg|gif|webp)$/;
const DEFAULT_KEY = /^avatars\/default\/([1-9]\d{0,17})\.png$/;

interface AvatarRow {
  org_id: number;
  source: 'local' | 'lookup';
  object_key: string | null;
  content_type: string | null;
  size_bytes: number | null;
  email: string | null;
  federavatar: boolean;
  updated_at: Date;
}

export interface AvatarLimits {
  /** Largest accepted image, in bytes. */
  maxBytes: number;
}

/** The key of an organization's generated default avatar. */
export const defaultAvatarKey = (orgId: number) => `avatars/default/${orgId}.png`;

/** The Gravatar (or, federated, Libravatar) URL of an email, as Gitea builds it. */
export function lookupUrl(email: string, federated: boolean): string {
  const hash = createHash('md5').update(email.trim().toLowerCase()).digest('hex');
  const base = federated ? 'https://seccdn.libravatar.org/avatar/' : 'https://secure.gravatar.com/avatar/';
  return `${base}${hash}?d=identicon`;
}

/**
 * Organization avatars: an uploaded image kept in object storage under a content-addressed key
 * (`avatars/org/<org>/<sha256/128>.<ext>`), an email lookup, or, by default, a generated identicon
 * (`avatars/default/<org>.png`, rendered on request, never stored).
 */
export class Avatars {
  constructor(
    private readonly db: Database,
    private readonly storage: ObjectStorage,
    private readonly limits: AvatarLimits,
    private readonly log: Logger,
  ) {}

  private async assertOrg(orgId: number, trx?: Knex.Transaction, lock = false): Promise<void> {
    const q = this.db.table('accounts', trx).where({ id: orgId, type: ACCOUNT_TYPE.organization }).first('id');
    const row = await (lock ? q.forUpdate() : q);
    if (!row) throw new NotFoundError(`organization ${orgId} does not exist`);
  }

  private toAvatar(orgId: number, row: AvatarRow | undefined): orgsTeamsAvatarsV1.Avatar {
    if (!row) return { orgId, source: 'default', objectKey: defaultAvatarKey(orgId), externalUrl: '', updatedUnix: 0 };
    if (row.source === 'local')
      return { orgId, source: 'local', objectKey: row.object_key!, externalUrl: '', updatedUnix: unixSeconds(row.updated_at) };
    return {
      orgId,
      source: 'lookup',
      objectKey: '',
      externalUrl: lookupUrl(row.email!, row.federavatar),
      updatedUnix: unixSeconds(row.updated_at),
    };
  }

  async get(orgId: number): Promise<orgsTeamsAvatarsV1.Avatar> {
    await this.assertOrg(orgId);
    return this.toAvatar(orgId, await this.db.table<AvatarRow>('org_avatars').where({ org_id: orgId }).first());
  }

  /** Validates an uploaded image: size (400), type by magic bytes (422), dimensions (400). */
  private checkImage(image: Buffer): { type: ImageType } {
    if (image.length > this.limits.maxBytes) {
      throw new InputError(`avatar: the image is larger than ${this.limits.maxBytes} bytes`, [
        { field: 'avatar', description: `at most ${this.limits.maxBytes} bytes` },
      ]);
    }
    const sniffed = sniffImage(image);
    if (!sniffed || !AVATAR_TYPES.includes(sniffed.type)) {
      throw new ValidationError('avatar: the file is not a PNG, JPEG, GIF or WebP image', [
        { field: 'avatar', description: 'must be a PNG, JPEG, GIF or WebP image' },
      ]);
    }
    if (sniffed.width < 1 || sniffed.height < 1 || sniffed.width > AVATAR_MAX_DIMENSION || sniffed.height > AVATAR_MAX_DIMENSION) {
      throw new InputError(`avatar: the image must be between 1 and ${AVATAR_MAX_DIMENSION} pixels wide and high`, [
        { field: 'avatar', description: `at most ${AVATAR_MAX_DIMENSION}×${AVATAR_MAX_DIMENSION} pixels` },
      ]);
    }
    return { type: sniffed.type };
  }

  /** Stores an upload or switches to a lookup; the previous stored image is deleted once the change is committed. */
  async update(req: orgsTeamsAvatarsV1.UpdateAvatarRequest): Promise<orgsTeamsAvatarsV1.Avatar> {
    const image = Buffer.from(req.image ?? []);
    const source = req.source || (image.length > 0 ? 'local' : req.gravatar ? 'lookup' : '');
    if (source !== 'local' && source !== 'lookup') {
      throw new ValidationError(
        req.source ? 'source: must be "local" or "lookup"' : 'send an avatar file, or a gravatar email address to look up',
        [{ field: req.source ? 'source' : 'avatar', description: req.source ? 'must be local or lookup' : 'required' }],
      );
    }
    await this.assertOrg(req.orgId);

    let fields: Partial<AvatarRow>;
    let upload: { key: string; type: ImageType } | undefined;
    if (source === 'local') {
      if (image.length === 0) {
        throw new ValidationError('avatar: an image file is required with source=local', [{ field: 'avatar', description: 'required' }]);
      }
      const { type } = this.checkImage(image);
      const digest = createHash('sha256').update(image).digest('hex').slice(0, 32);
      upload = { key: `avatars/org/${req.orgId}/${digest}.${EXTENSION_OF[type]}`, type };
      fields = {
        source: 'local',
        object_key: upload.key,
        content_type: MIME_OF[type],
        size_bytes: image.length,
        email: null,
        federavatar: false,
      };
    } else {
      const email = req.gravatar.trim().toLowerCase();
      if (!EMAIL.test(email) || email.length > 255) {
        throw new ValidationError('gravatar: an email address to look up is required with source=lookup', [
          { field: 'gravatar', description: 'must be an email address' },
        ]);
      }
      fields = { source: 'lookup', object_key: null, content_type: null, size_bytes: null, email, federavatar: req.federavatar };
    }

    // Stored before the row can point at it, and outside the transaction: a transaction holds the one database
    // connection of the process (decision D6), so it never waits for the object store.
    if (upload) await this.storage.put(upload.key, image, MIME_OF[upload.type]);
    let previous: AvatarRow | undefined;
    let saved: AvatarRow;
    try {
      [previous, saved] = await this.db.transaction(async (trx) => {
        // The organization row lock serialises the changes of one avatar.
        await this.assertOrg(req.orgId, trx, true);
        const before = await this.db.table<AvatarRow>('org_avatars', trx).where({ org_id: req.orgId }).first();
        const [after] = await this.db
          .table('org_avatars', trx)
          .insert({ org_id: req.orgId, ...fields, updated_by: req.userId || null, updated_at: this.db.knex.fn.now() })
          .onConflict('org_id')
          .merge()
          .returning('*');
        return [before, after as AvatarRow];
      });
    } catch (err) {
      // The upload is unused, unless the avatar already was this very image.
      if (upload) await this.discard(req.orgId, upload.key);
      throw err;
    }
    if (upload) await this.ensureStored(upload.key, image, MIME_OF[upload.type]);
    if (previous?.object_key && previous.object_key !== upload?.key) await this.discard(req.orgId, previous.object_key);
    return this.toAvatar(req.orgId, saved);
  }

  /** Back to the generated default; the stored image, if any, is deleted. Deleting a default avatar is a no-op. */
  async delete(orgId: number): Promise<orgsTeamsAvatarsV1.Avatar> {
    const previous = await this.db.transaction(async (trx) => {
      await this.assertOrg(orgId, trx, true);
      const before = await this.db.table<AvatarRow>('org_avatars', trx).where({ org_id: orgId }).first();
      await this.db.table('org_avatars', trx).where({ org_id: orgId }).delete();
      return before;
    });
    if (previous?.object_key) await this.discard(orgId, previous.object_key);
    return this.toAvatar(orgId, undefined);
  }

  /**
   * Inside the transaction that deletes an organization: stages the deletion of its stored image, which
   * happens once the deletion committed (storage is never touched in a transaction), by `discardUnused`.
   */
  async onOrgDelete(trx: Knex.Transaction, orgId: number, stage: StageEffect): Promise<void> {
    const row = await this.db.table<AvatarRow>('org_avatars', trx).where({ org_id: orgId }).first();
    if (row?.object_key) stage(EFFECT.avatarDiscarded, { orgId, key: row.object_key });
  }

  /** Deletes a stored image unless an avatar uses it again; applying it twice changes nothing. */
  discardUnused(orgId: number, key: string): Promise<void> {
    return this.discard(orgId, key);
  }

  /** The bytes behind an avatar key: a stored upload, or the rendered default of an existing organization. */
  async object(key: string): Promise<orgsTeamsAvatarsV1.AvatarObject> {
    const byDefault = DEFAULT_KEY.exec(key);
    if (byDefault) {
      await this.assertOrg(Number(byDefault[1]));
      return { body: identiconPng(`organization:${byDefault[1]}`), contentType: 'image/png' };
    }
    // Only the image an avatar points at now is served: a replaced one is gone even if its deletion failed.
    if (LOCAL_KEY.test(key) && (await this.db.table('org_avatars').where({ object_key: key }).first('org_id'))) {
      const stored = await this.storage.get(key);
      if (stored) return { body: stored.body, contentType: stored.contentType };
    }
    throw new NotFoundError('no such avatar object');
  }

  /** Whether the organization's avatar points at a key, read after any change of it in progress has committed. */
  private async inUse(orgId: number, key: string): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      await this.db.table('accounts', trx).where({ id: orgId }).forUpdate().first('id');
      const current = await this.db.table<AvatarRow>('org_avatars', trx).where({ org_id: orgId }).first('object_key');
      return current?.object_key === key;
    });
  }

  /**
   * Deletes a stored object of an organization unless its avatar points at it, after the change that made it
   * unused has committed; no transaction is open while the store is called (decision D6). Keys are content
   * addressed, so a concurrent upload of the same image may adopt the key between the check and the deletion:
   * the bytes are read first and put back when the avatar points at the key afterwards (ensureStored covers
   * an upload that commits later still). A failure leaves an orphan object, which is only logged.
   */
  private async discard(orgId: number, key: string): Promise<void> {
    try {
      if (await this.inUse(orgId, key)) return;
      const stored = await this.storage.get(key);
      if (!stored) return;
      await this.storage.delete(key);
      if (await this.inUse(orgId, key)) {
        this.log.info({ key }, 'an avatar object was adopted again while it was deleted; putting it back');
        await this.storage.put(key, stored.body, stored.contentType);
      }
    } catch (err) {
      this.log.warn({ err, key }, 'could not delete an unused avatar object');
    }
  }

  /**
   * After the avatar points at an upload: puts it again if a clean-up of the same key (an earlier copy of this
   * image, replaced meanwhile) deleted it after it was stored and before the row was committed.
   */
  private async ensureStored(key: string, image: Buffer, contentType: string): Promise<void> {
    try {
      if (!(await this.storage.get(key))) {
        this.log.info({ key }, 'an uploaded avatar object was deleted by a concurrent clean-up; putting it back');
        await this.storage.put(key, image, contentType);
      }
    } catch (err) {
      this.log.warn({ err, key }, 'could not check that the avatar object is stored');
    }
  }
}
