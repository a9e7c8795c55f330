import type { ApiRequest } from './api-request';
import { z } from 'zod';
import { InputError, PayloadTooLargeError, ValidationError } from '@platform/errors';
import type { GatewayConfig } from './config';

/**
 * multipart/form-data bodies, read at the edge for every row that declares one (`body.multipart`): text
 * fields and at most one file part, in memory (multer), bounded before and while reading. The row's schema
 * then parses `{ ...fields, [file]: FormFile }` like any body. multer is loaded on the first form, not with the
 * route table.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const multerLib = () => require('multer') as typeof import('multer');

/** What a row says about its form. */
export interface MultipartSpec {
  /** The field name of the one file part; a file under another name is malformed (422). */
  file: string;
  /** The largest file in bytes, from the configuration. */
  maxBytes(config: GatewayConfig): number;
  /** A file over the limit: 400 where the spec calls it invalid (avatars), else 413. */
  tooLarge: 400 | 413;
  /** At most this many text fields, each at most `fieldSize` bytes (more is malformed, 422). */
  fields: number;
  fieldSize: number;
}

/** An uploaded file part. */
export class FormFile {
  constructor(
    readonly content: Buffer,
    readonly fileName: string,
    readonly contentType: string,
  ) {}
}

/** The schema of a file part, documented as binary. */
export const formFile = z.instanceof(FormFile).meta({ type: 'string', format: 'binary' });

/** Room for the multipart framing (boundaries, part headers) around the parts. */
const FRAMING_BYTES = 16 * 1024;

function tooLarge(spec: MultipartSpec, maxBytes: number, what: string): Error {
  const message = `${spec.file}: the ${what} is larger than ${maxBytes} bytes`;
  if (spec.tooLarge === 413) return new PayloadTooLargeError(message);
  return new InputError(message, [{ field: spec.file, description: `at most ${maxBytes} bytes` }]);
}

/** Multer's and busboy's failures: a file over the limit per the row, anything else wrong with the form 422. */
function formError(err: unknown, spec: MultipartSpec, maxBytes: number): unknown {
  if (err instanceof multerLib().MulterError) {
    if (err.code === 'LIMIT_FILE_SIZE') return tooLarge(spec, maxBytes, spec.tooLarge === 413 ? 'file' : 'image');
    if (err.code === 'LIMIT_UNEXPECTED_FILE') {
      return new ValidationError(`unexpected file field "${err.field}": the file goes in "${spec.file}"`, [
        { field: String(err.field), description: 'unexpected file' },
      ]);
    }
    return new ValidationError(`malformed multipart body: ${err.message}`);
  }
  // busboy's own errors: a broken boundary, a truncated form, bad part headers.
  return new ValidationError(`malformed multipart body: ${(err as Error).message}`);
}

/**
 * Reads the form of a request the edge already knows to be multipart (or bodiless: then 422). A request whose
 * Content-Length already exceeds what the form may hold is refused before a byte is read.
 */
export async function readMultipart(req: ApiRequest, spec: MultipartSpec, config: GatewayConfig): Promise<Record<string, unknown>> {
  if (!req.is('multipart/form-data')) throw new ValidationError('the body must be multipart/form-data');
  const maxBytes = spec.maxBytes(config);
  const declared = Number(req.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes + spec.fields * spec.fieldSize + FRAMING_BYTES) {
    throw tooLarge(spec, maxBytes, 'request');
  }
  const multer = multerLib();
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: {
      fileSize: maxBytes,
      files: 1,
      fields: spec.fields,
      fieldSize: spec.fieldSize,
      parts: spec.fields + 1,
      headerPairs: 100,
    },
  }).single(spec.file);
  await new Promise<void>((resolve, reject) => {
    // multer reads node's request and sets its body and file there (ApiRequest reads them back).
    upload(req.raw as never, req.res as never, (err?: unknown) => (err ? reject(formError(err, spec, maxBytes)) : resolve()));
  });
  const fields = { ...(req.body as Record<string, unknown>) };
  const file = req.file;
  if (file) fields[spec.file] = new FormFile(file.buffer, file.originalname, file.mimetype);
  return fields;
}
