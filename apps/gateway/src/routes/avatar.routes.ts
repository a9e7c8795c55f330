import type { Request, Response } from 'express';
import multer from 'multer';
import { InputError, ValidationError } from '@platform/errors';
import type { orgsTeamsAvatarsV1 } from '@platform/proto';
import { checkLengths, TEXT_LIMITS } from '@platform/service-kit';
import type { Route, RouteContext } from '../route';
import { signedObjectUrl } from './objects.routes';
import { orgFromPath } from './org-path';

/** Room for the multipart framing and the small text fields around the image. */
const MULTIPART_OVERHEAD = 16 * 1024;

/** The URL an avatar is shown from: a signed URL of ours for stored and default images, else the lookup URL. */
async function avatarUrl(req: Request, ctx: RouteContext, avatar: orgsTeamsAvatarsV1.Avatar): Promise<string> {
  return avatar.objectKey ? signedObjectUrl(req, ctx, avatar.objectKey) : avatar.externalUrl;
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

/** Reads the multipart form (memory storage, bounded) into req.file and req.body. */
async function readForm(req: Request, maxBytes: number): Promise<void> {
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
}

/** One text field of the form; a repeated field is malformed. */
function field(req: Request, name: string): string {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  if (v === undefined) return '';
  if (typeof v !== 'string') throw new ValidationError(`${name}: must be given once`, [{ field: name, description: 'must be given once' }]);
  return v.trim();
}

/** The `federavatar` checkbox: true/on/1 or false/off/0/empty. */
function flag(req: Request, name: string): boolean {
  const v = field(req, name).toLowerCase();
  if (['true', 'on', '1'].includes(v)) return true;
  if (['false', 'off', '0', ''].includes(v)) return false;
  throw new ValidationError(`${name}: must be a boolean`, [{ field: name, description: 'must be true or false' }]);
}

/** Organization avatars (spec 4.13). Each answers the avatar URL now in effect, as a JSON string. */
export const avatarRoutes: Route[] = [
  {
    method: 'get',
    path: '/orgs/:orgname/avatar/',
    summary: "The organization's avatar URL (view:avatar); the URL serves the image",
    auth: 'token',
    check: { permission: 'view:avatar', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const avatar = await ctx.backends.avatars.getAvatar({ orgId: await orgFromPath(req, ctx) }, { requestId: ctx.requestId });
      return { body: await avatarUrl(req, ctx, avatar) };
    },
  },
  {
    method: 'post',
    path: '/orgs/:orgname/avatar/',
    summary: 'Upload an avatar (multipart: avatar file, or source=lookup with gravatar and federavatar) (update:avatar)',
    auth: 'token',
    check: { permission: 'update:avatar', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const maxBytes = ctx.config.AVATAR_MAX_BYTES;
      await readForm(req, maxBytes);
      checkLengths([
        ['source', field(req, 'source'), TEXT_LIMITS.choice],
        ['gravatar', field(req, 'gravatar'), TEXT_LIMITS.avatarLookup],
      ]);
      const avatar = await ctx.backends.avatars.updateAvatar(
        {
          orgId: await orgFromPath(req, ctx),
          source: field(req, 'source').toLowerCase(),
          image: req.file?.buffer ?? Buffer.alloc(0),
          gravatar: field(req, 'gravatar'),
          federavatar: flag(req, 'federavatar'),
          userId: ctx.caller!.id,
        },
        { requestId: ctx.requestId },
      );
      return { body: await avatarUrl(req, ctx, avatar) };
    },
  },
  {
    method: 'post',
    path: '/orgs/:orgname/avatar/delete',
    summary: 'Delete the avatar, back to the generated default (delete:avatar)',
    auth: 'token',
    check: { permission: 'delete:avatar', on: orgFromPath },
    service: 'orgs-teams',
    async handle(req, ctx) {
      const avatar = await ctx.backends.avatars.deleteAvatar({ orgId: await orgFromPath(req, ctx) }, { requestId: ctx.requestId });
      return { body: await avatarUrl(req, ctx, avatar) };
    },
  },
];
