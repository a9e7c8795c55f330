import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './gen/schema';

/** A schema of the API document by name, e.g. `Schema<'Organization'>`. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

/** What the API answered when it refused: its status and `message` (and `errors`, per field, on 422). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let token: string | undefined;
let onUnauthenticated: (() => void) | undefined;

/** The token every call presents from now on (none: anonymous); the session sets it. */
export function presentToken(value: string | undefined, whenRefused?: () => void): void {
  token = value;
  onUnauthenticated = whenRefused;
}

const authentication: Middleware = {
  onRequest({ request }) {
    if (token && !request.headers.has('authorization')) request.headers.set('authorization', `token ${token}`);
    return request;
  },
  onResponse({ response }) {
    // A token deleted elsewhere (or expired) ends the session rather than failing every screen one by one.
    if (response.status === 401 && token && onUnauthenticated) onUnauthenticated();
    return response;
  },
};

/**
 * The typed client of /api/v1, generated from the API document the gateway serves. `fetch` is looked up at each call,
 * not when the module loads, so the component tests' stub of it is the one used.
 */
export const api = createClient<paths>({ baseUrl: '/api/v1', fetch: (request) => globalThis.fetch(request) });
api.use(authentication);

/** The data of an answer, or an ApiError carrying the API's own `message`. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const body = (error ?? {}) as { message?: unknown; errors?: unknown };
  const message = typeof body.message === 'string' && body.message ? body.message : `${response.status} ${response.statusText}`;
  throw new ApiError(response.status, message, body.errors);
}

/** Saves a downloaded answer (a PDF, a license) under a name, as the browser's own download would. */
export async function download(path: string, fallbackName: string): Promise<string> {
  const res = await fetch(`/api/v1${path}`, { headers: token ? { authorization: `token ${token}` } : {} });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { message?: string };
    throw new ApiError(res.status, body.message ?? `${res.status} ${res.statusText}`);
  }
  const blob = await res.blob();
  const name = /filename="?([^";]+)"?/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  saveBlob(blob, name);
  return name;
}

/** Offers a blob to the user as a file. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
