import { z } from 'zod';
import type { orgsTeamsAvatarsV1 } from '@platform/proto';
import { checkLengths, TEXT_LIMITS } from '@platform/service-kit';
import { formFile, type MultipartSpec } from '../../multipart';
import * as p from '../../params';
import { sectionRoutes, type EdgeContext } from '../../route';
import { orgInPath } from '../../targets';
import { signedObjectUrl } from '../../signed-objects';

const route = sectionRoutes({ tag: 'Organizations', backend: 'orgs-teams' });

// Organization avatars. Each route answers the avatar URL now in effect, as a JSON string.

/** The URL an avatar is shown from: a signed URL of ours for stored and default images, else the lookup URL. */
async function avatarUrl(ctx: EdgeContext, avatar: orgsTeamsAvatarsV1.Avatar): Promise<string> {
  return avatar.objectKey ? signedObjectUrl(ctx, avatar.objectKey) : avatar.externalUrl;
}

/** The form: the image under `avatar`; an oversized image is 400, anything else wrong 422. */
const AVATAR_FORM: MultipartSpec = {
  file: 'avatar',
  maxBytes: (config) => config.AVATAR_MAX_BYTES,
  tooLarge: 400,
  fields: 8,
  fieldSize: 1024,
};

// A repeated text field arrives as an array: malformed (422). Lengths are checked by the handler: over-long
// values are invalid (400), as orgs-teams answers them.
const text = z.string({ error: 'must be given once' }).trim().default('');
/** The form of POST /orgs/{orgname}/avatar/: an image file, or source=lookup with gravatar and federavatar. */
const AvatarForm = z.object({
  avatar: formFile.optional().meta({ description: 'the image (PNG, JPEG, GIF, WebP)' }),
  source: text,
  gravatar: text,
  federavatar: z
    .string({ error: 'must be given once' })
    .trim()
    .toLowerCase()
    .default('')
    .refine((v) => ['true', 'on', '1', 'false', 'off', '0', ''].includes(v), 'must be true or false')
    .transform((v) => ['true', 'on', '1'].includes(v)),
});

const AvatarUrl = z.string().meta({ description: 'the URL the avatar is shown from' });
const Org = z.object({ orgname: p.login });

export const avatarRoutes = [
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/orgs/:orgname/avatar/',
    summary: "The organization's avatar URL (view:avatar); the URL serves the image",
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'view:avatar' }],
    response: { status: 200, schema: AvatarUrl },
    async handle(_input, ctx) {
      return { body: await avatarUrl(ctx, await ctx.kept.orgsTeams.avatars.getAvatar({ orgId: ctx.target.id })) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/orgs/:orgname/avatar/',
    summary: 'Upload an avatar (multipart: avatar file, or source=lookup with gravatar and federavatar) (update:avatar)',
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'update:avatar' }],
    body: { schema: AvatarForm, multipart: AVATAR_FORM },
    response: { status: 200, schema: AvatarUrl },
    async handle({ body }, ctx) {
      checkLengths([
        ['source', body.source, TEXT_LIMITS.choice],
        ['gravatar', body.gravatar, TEXT_LIMITS.avatarLookup],
      ]);
      const avatar = await ctx.backends.orgsTeams.avatars.updateAvatar({
        orgId: ctx.target.id,
        source: body.source.toLowerCase(),
        image: body.avatar?.content ?? Buffer.alloc(0),
        gravatar: body.gravatar,
        federavatar: body.federavatar,
        userId: ctx.caller.id,
      });
      return { body: await avatarUrl(ctx, avatar) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/orgs/:orgname/avatar/delete',
    summary: 'Delete the avatar, back to the generated default (delete:avatar)',
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'delete:avatar' }],
    response: { status: 200, schema: AvatarUrl },
    async handle(_input, ctx) {
      return { body: await avatarUrl(ctx, await ctx.backends.orgsTeams.avatars.deleteAvatar({ orgId: ctx.target.id })) };
    },
  }),
];
