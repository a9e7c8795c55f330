import type { Request, Response } from 'express';
import multer from 'multer';
import { z } from 'zod';
import { InputError, ValidationError } from '@platform/errors';
import type { orgsTeamsAvatarsV1 } from '@platform/proto';
import { checkLengths, TEXT_LIMITS } from '@platform/service-kit';
import type { GatewayConfig } from '../../config';
import * as p from '../../params';
import { sectionRoutes, type EdgeContext } from '../../route';
import { orgInPath } from '../../targets';
import { signedObjectUrl } from '../objects/routes';

const route = sectionRoutes({ section: '4.13', backend: 'orgs-teams' });

// Organization avatars (spec 4.13). Each route answers the avatar URL now in effect, as a JSON string.

/** Room for the multipart framing and the small text fields around the image. */
const MULTIPART_OVERHEAD = 16 * 1024;

/** The URL an avatar is shown from: a signed URL of ours for stored and default images, else the lookup URL. */
async function avatarUrl(ctx: EdgeContext, avatar: orgsTeamsAvatarsV1.Avatar): Promise<string> {
  return avatar.objectKey ? signedObjectUrl(ctx, avatar.objectKey) : avatar.externalUrl;
}

/** Multer failures as the spec's statuses: an oversized image is 400, anything else wrong with the form is 422. */
function multipartError(err: unknown, maxBytes: number): unknown {
  if (err instanceof multer.MulterError) {
    if (err.code === 'LIMIT_FILE_SIZE') {
      return new InputError(`avatar: the image is larger than ${maxBytes} bytes`, [
        { field: 'avatar', description: `at most ${maxBytes} bytes` },
      ]);
    }
    if (err.code === 'LIMIT_UNEXPECTED_FILE') {
      return new ValidationError(`unexpected file field "${err.field}": the image goes in "avatar"`, [
        { field: String(err.field), description: 'unexpected file' },
      ]);
    }
    return new ValidationError(`malformed multipart body: ${err.message}`);
  }
  // busboy's own errors: a broken boundary, a truncated form, bad part headers.
  return new ValidationError(`malformed multipart body: ${(err as Error).message}`);
}

/** Reads the multipart form (memory storage, bounded) into the object AvatarForm parses. */
async function readForm(req: Request, config: GatewayConfig): Promise<unknown> {
  const maxBytes = config.AVATAR_MAX_BYTES;
  if (!req.is('multipart/form-data')) throw new ValidationError('the body must be multipart/form-data');
  const declared = Number(req.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes + MULTIPART_OVERHEAD) {
    // Refused before a byte is read: the client said how much it would send.
    throw new InputError(`avatar: the request is larger than ${maxBytes} bytes`, [
      { field: 'avatar', description: `at most ${maxBytes} bytes` },
    ]);
  }
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: maxBytes, files: 1, fields: 8, fieldSize: 1024, parts: 9, headerPairs: 100 },
  }).single('avatar');
  await new Promise<void>((resolve, reject) => {
    upload(req, req.res as Response, (err?: unknown) => (err ? reject(multipartError(err, maxBytes)) : resolve()));
  });
  return { ...(req.body as object), avatar: req.file?.buffer };
}

// A repeated text field arrives as an array: malformed (422). Lengths are checked by the handler: over-long
// values are invalid (400), as orgs-teams answers them.
const text = z.string({ error: 'must be given once' }).trim().default('');
/** The form of POST /orgs/{orgname}/avatar/: an image file, or source=lookup with gravatar and federavatar. */
const AvatarForm = z.object({
  avatar: z.instanceof(Buffer).optional().meta({ type: 'string', format: 'binary', description: 'the image (PNG, JPEG, GIF, WebP)' }),
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
    path: '/orgs/:orgname/avatar/',
    summary: "The organization's avatar URL (view:avatar); the URL serves the image",
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'view:avatar' }],
    response: { status: 200, schema: AvatarUrl },
    async handle(_input, ctx) {
      return { body: await avatarUrl(ctx, await ctx.backends.orgsTeams.avatars.getAvatar({ orgId: ctx.target.id })) };
    },
  }),
  route({
    method: 'post',
    path: '/orgs/:orgname/avatar/',
    summary: 'Upload an avatar (multipart: avatar file, or source=lookup with gravatar and federavatar) (update:avatar)',
    auth: 'token',
    params: Org,
    target: orgInPath,
    requires: [{ on: 'target', permission: 'update:avatar' }],
    body: { schema: AvatarForm, contentType: 'multipart/form-data', read: readForm },
    response: { status: 200, schema: AvatarUrl },
    async handle({ body }, ctx) {
      checkLengths([
        ['source', body.source, TEXT_LIMITS.choice],
        ['gravatar', body.gravatar, TEXT_LIMITS.avatarLookup],
      ]);
      const avatar = await ctx.backends.orgsTeams.avatars.updateAvatar({
        orgId: ctx.target.id,
        source: body.source.toLowerCase(),
        image: body.avatar ?? Buffer.alloc(0),
        gravatar: body.gravatar,
        federavatar: body.federavatar,
        userId: ctx.caller.id,
      });
      return { body: await avatarUrl(ctx, avatar) };
    },
  }),
  route({
    method: 'post',
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
