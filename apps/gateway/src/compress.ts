import compression from 'compression';
import type { Request, Response } from 'express';

/**
 * Compresses what the gateway answers when the client accepts it (gzip, or br when preferred), above 1 KB: the
 * console's scripts and styles, its page, the API document and the JSON answers. Content that is packed already
 * (PDF summaries, images, archives, signed objects of an unknown type sent as application/octet-stream) is sent as
 * it is, since compressing it again costs CPU for nothing; so is an answer marked `Cache-Control: no-transform`.
 * Express's static files keep their ETag and 304s (a 304 has no body to compress), and Content-Length is dropped
 * only from an answer that is compressed, whose length is then unknown until it is sent.
 */
export function compressAnswers() {
  return compression({ filter: worthCompressing });
}

export function worthCompressing(req: Request, res: Response): boolean {
  const type = String(res.getHeader('Content-Type') ?? '');
  if (!type || /^application\/octet-stream\b/i.test(type)) return false;
  // The default filter: a type the MIME database marks compressible (text, JSON, JavaScript, SVG, ...).
  return compression.filter(req, res);
}
