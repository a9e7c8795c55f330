import type { ServerResponse } from 'node:http';
import { contentType as withCharset } from 'mime-types';
import { JsonText } from './route';

/**
 * Sends an answer's body on node's response, with the headers Express's `res.json` and `res.send` gave it, which
 * clients saw before the API rows left Express: a JSON body as `application/json; charset=utf-8` (a type the row set
 * keeps, with charset utf-8), ready JSON text likewise, bytes as they are (`application/octet-stream` unless the row
 * said otherwise), a Content-Type the row gave without a charset completed with its type's (text, JSON), a
 * Content-Length, and no body at all for 204 and 304. HEAD gets the headers only (Node leaves the body out).
 */
export function sendBody(res: ServerResponse, body: unknown): void {
  const given = res.getHeader('content-type');
  if (typeof given === 'string' && !/;\s*charset=/i.test(given)) res.setHeader('Content-Type', withCharset(given) || given);
  if (body === undefined) {
    res.end();
    return;
  }
  let bytes: Buffer;
  if (body instanceof JsonText) {
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    bytes = body.bytes;
  } else if (Buffer.isBuffer(body)) {
    if (!res.hasHeader('content-type')) res.setHeader('Content-Type', 'application/octet-stream');
    bytes = body;
  } else {
    res.setHeader('Content-Type', utf8(res.getHeader('content-type')));
    bytes = Buffer.from(JSON.stringify(body) ?? '');
  }
  if (res.statusCode === 204 || res.statusCode === 304) {
    for (const name of ['Content-Type', 'Content-Length', 'Transfer-Encoding']) res.removeHeader(name);
    res.end();
    return;
  }
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

/** The row's Content-Type with charset utf-8 (any other charset it named replaced), or JSON's. */
function utf8(type: unknown): string {
  if (typeof type !== 'string') return 'application/json; charset=utf-8';
  return `${type.replace(/;\s*charset=("[^"]*"|[^;]*)/gi, '')}; charset=utf-8`;
}
