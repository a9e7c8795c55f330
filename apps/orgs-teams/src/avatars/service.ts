import type { Database } from '@platform/db';
import type { ObjectStorage } from '@platform/object-storage';
import { orgsTeamsAvatarsV1 } from '@platform/proto';
import { bindService, versionOf, type Logger } from '@platform/service-kit';
import { Avatars, type AvatarLimits } from './avatars';

/** The AvatarsService binding (spec 4.13); the gateway has checked view:avatar, update:avatar or delete:avatar already. */
export function avatarsService(db: Database, storage: ObjectStorage, limits: AvatarLimits, log: Logger) {
  const avatars = new Avatars(db, storage, limits, log);
  return bindService(orgsTeamsAvatarsV1.AvatarsServiceService, {
    getVersion: async () => versionOf('orgs-teams'),
    getAvatar: (req) => avatars.get(req.orgId),
    updateAvatar: (req) => avatars.update(req),
    deleteAvatar: (req) => avatars.delete(req.orgId),
    getAvatarObject: (req) => avatars.object(req.key),
  });
}
