import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyAddr from 'proxy-addr';
import qs from 'qs';
import typeIs from 'type-is';

/** Node's request as the gateway marks it: its request id, and what the body readers (body-parser, multer) set. */
export type Incoming = IncomingMessage & {
  requestId: string;
  body?: unknown;
  file?: { buffer: Buffer; originalname: string; mimetype: string };
};

/** Node's response as the gateway marks it: what the access line reads (the row, the user, the login tried). */
export type Outgoing = ServerResponse & { locals: Record<string, unknown> };

/** Whether the peer at `address`, `hop` proxies from the gateway, may name the client (TRUST_PROXY). */
export type Trust = (address: string | undefined, hop: number) => boolean;

/**
 * TRUST_PROXY as Express compiles its `trust proxy` setting (which the rest of the gateway's paths still use): a number
 * of hops, or addresses, ranges and names (`loopback`, ...); unset, no peer is believed.
 */
export function compileTrust(setting: number | string[] | undefined): Trust {
  if (setting === undefined) return () => false;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  const trusted = proxyAddr.compile(setting);
  return (address, hop) => address !== undefined && trusted(address, hop);
}

/** The client's address: the peer, or the client X-Forwarded-For names through the peers TRUST_PROXY believes. */
export const clientAddress = (req: IncomingMessage, trust: Trust): string => proxyAddr(req, trust as (address: string, hop: number) => boolean);

/**
 * What a row's handling reads of its request (edge.ts and the sections): a view of node's request, made once per API
 * request, in place of Express's request object, whose making (a prototype swapped on every request and response)
 * alone took a bare node:http server from 17 to 55 µs a request. It answers as Express's did: `path` below the API
 * root, `get` a header (Referer and Referrer alike), `ip` and `secure` through TRUST_PROXY, `query` parsed by qs as
 * Express's extended parser does, `is` by type-is.
 */
export class ApiRequest {
  /** The row's path parameters, decoded (route-table.ts). */
  params: Record<string, string | string[]> = {};
  private parsedQuery: Record<string, unknown> | undefined;

  constructor(
    readonly raw: Incoming,
    readonly res: Outgoing,
    /** The API root as the request spelled it (`/api/v1`, in any case). */
    readonly baseUrl: string,
    /** The path below the API root, `/` at the root itself; not decoded. */
    readonly path: string,
    /** The query string, without its `?`. */
    private readonly search: string,
    private readonly trust: Trust,
  ) {}

  get method(): string {
    return this.raw.method ?? 'GET';
  }

  get requestId(): string {
    return this.raw.requestId;
  }

  /** The URL as the request gave it: path and query. */
  get originalUrl(): string {
    return this.raw.url ?? '/';
  }

  get headers(): IncomingMessage['headers'] {
    return this.raw.headers;
  }

  /** The JSON body (http.ts reads it before the row runs) or a form's fields (multipart.ts). */
  get body(): unknown {
    return this.raw.body;
  }

  get file(): Incoming['file'] {
    return this.raw.file;
  }

  get(name: string): string | undefined {
    const key = name.toLowerCase();
    const headers = this.raw.headers;
    const value = key === 'referer' || key === 'referrer' ? (headers.referrer ?? headers.referer) : headers[key];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  get query(): Record<string, unknown> {
    // Express 5's extended parser: qs, keys such as `hasOwnProperty` allowed (qs never writes a prototype).
    return (this.parsedQuery ??= this.search ? (qs.parse(this.search, { allowPrototypes: true }) as Record<string, unknown>) : {});
  }

  get ip(): string {
    return clientAddress(this.raw, this.trust);
  }

  /** `https` when the connection is, or when a believed proxy says so in X-Forwarded-Proto. */
  get protocol(): string {
    const own = (this.raw.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
    if (!this.trust(this.raw.socket.remoteAddress, 0)) return own;
    const forwarded = this.get('x-forwarded-proto') ?? own;
    return forwarded.split(',')[0].trim();
  }

  get secure(): boolean {
    return this.protocol === 'https';
  }

  /** The first of `types` the body's Content-Type is, false for none, null without a body (type-is). */
  is(...types: string[]): string | false | null {
    return typeIs(this.raw, types);
  }
}
