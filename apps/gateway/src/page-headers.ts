import { createHash } from 'node:crypto';
import { ServerResponse, type OutgoingHttpHeaders } from 'node:http';

/**
 * What a page may load unless it says otherwise: nothing (its text and links need nothing), no form posting
 * anywhere, no site framing it.
 */
export const PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The security headers the console's page has always had, with a Content-Security-Policy of the page's own. */
export const pageHeaders = (csp: string = PAGE_CSP): Record<string, string> => ({
  'Content-Security-Policy': csp,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
});

const DEFAULTS = Object.entries(pageHeaders());

/** A Content-Security-Policy source allowing exactly this inline `<style>` or `<script>` content, and nothing else inline. */
export const inlineHash = (content: string): string => `'sha256-${createHash('sha256').update(content).digest('base64')}'`;

const isHtml = (type: unknown) => typeof type === 'string' && /^\s*text\/html\b/i.test(type);

/** The Content-Type a `writeHead(status[, message][, headers])` call gives, when it gives one. */
function typeGiven(args: unknown[]): unknown {
  const headers = args.find((a): a is OutgoingHttpHeaders => typeof a === 'object' && a !== null && !Array.isArray(a));
  if (!headers) return undefined;
  const name = Object.keys(headers).find((k) => k.toLowerCase() === 'content-type');
  return name && headers[name];
}

const nodeWriteHead = ServerResponse.prototype.writeHead;

/** Node's writeHead, giving an HTML answer the security headers it does not set itself just before they go out. */
function writeHeadOfPage(this: ServerResponse, ...args: unknown[]): ServerResponse {
  if (isHtml(this.getHeader('content-type') ?? typeGiven(args))) {
    for (const [name, value] of DEFAULTS) if (!this.hasHeader(name)) this.setHeader(name, value);
  }
  return (nodeWriteHead as (...a: unknown[]) => ServerResponse).apply(this, args);
}

/**
 * Makes every HTML answer of this response carry the page headers, whoever writes it (a row, the console, the API
 * reference, a redirect's or a library's page): those the page set itself (the console's wider policy) are kept, the
 * missing ones added. The one place HTML gets its headers; set on each response before anything else writes to it.
 */
export function securePages(res: ServerResponse): void {
  res.writeHead = writeHeadOfPage as ServerResponse['writeHead'];
}
