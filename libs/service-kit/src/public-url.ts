import { z } from 'zod';

/**
 * PUBLIC_URL: the address people and clients reach the platform at (`https://platform.example.com/`), as Gitea's
 * ROOT_URL and Grafana's root_url. Every absolute link the platform hands out — the single sign-on redirect URI,
 * where a finished sign-in lands, links in mails and pages, signed object URLs, paging links, installers — is built
 * on it and never on the request's Host or X-Forwarded-* headers, which a client chooses: a request with
 * `Host: evil.example` must not send a person's sign-in code or a verification link to evil.example.
 *
 * Only an origin: the platform is served at the root of its host, so a path would make every link wrong.
 */
export const publicUrlVar = z
  .string()
  .transform((raw, ctx) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a URL such as https://platform.example.com/' });
      return z.NEVER;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') ctx.addIssue({ code: 'custom', message: 'must be an http:// or https:// URL' });
    else if (url.username || url.password) ctx.addIssue({ code: 'custom', message: 'must not carry credentials' });
    else if (url.pathname !== '/' || url.search || url.hash)
      ctx.addIssue({ code: 'custom', message: 'must be only scheme, host and port (the platform is served at the root of its host)' });
    else return url.origin + '/';
    return z.NEVER;
  })
  .optional();

/** The port the gateway listens on when nothing says otherwise. */
const DEFAULT_HTTP_PORT = 8080;

/**
 * The platform's public URL, ending in `/`: PUBLIC_URL, or `http://localhost:<HTTP_PORT>/` when unset (as Gitea's
 * default ROOT_URL), which is right for a platform used on the machine it runs on and nowhere else.
 */
export function publicUrlOf(config: { PUBLIC_URL?: string; HTTP_PORT?: number }): string {
  return config.PUBLIC_URL ?? `http://localhost:${config.HTTP_PORT || DEFAULT_HTTP_PORT}/`;
}

/** An absolute URL of `path` (`/api/v1/...`, with its query) on the public URL. */
export function publicLink(publicUrl: string, path: string): string {
  return new URL(path.replace(/^\/+/, ''), publicUrl).href;
}
