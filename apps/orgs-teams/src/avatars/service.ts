import { orgsTeamsAvatarsV1 } from '@platform/proto';
import { bindService, versionOf } from '@platform/service-kit';
import type { Avatars } from './avatars';

/** The AvatarsService methods that change nothing; every other one is announced (changes.ts). */
export const AVATARS_READS: readonly (keyof typeof orgsTeamsAvatarsV1.AvatarsServiceService)[] = [
  'getVersion',
  'getAvatar',
  'getAvatarObject',
];

/** The AvatarsService binding; the gateway has checked view:avatar, update:avatar or delete:avatar already. */
export function avatarsService(avatars: Avatars) {
  return bindService(orgsTeamsAvatarsV1.AvatarsServiceService, {
    getVersion: async () => versionOf('orgs-teams'),
    getAvatar: (req) => avatars.get(req.orgId),
    updateAvatar: (req) => avatars.update(req),
    deleteAvatar: (req) => avatars.delete(req.orgId),
    getAvatarObject: (req) => avatars.object(req.key),
  });
}
