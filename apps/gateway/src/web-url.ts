import { z } from 'zod';

const HTTP_URL = z.url({ protocol: /^https?$/ });

/**
 * A web address a caller sets (a website, a multi-cluster-manager endpoint): `http://` or `https://` only, as Gitea's
 * `ValidUrl` binding takes, so no page or client that follows it runs a `javascript:` or `data:` URL; `""` clears it.
 * A body that breaks it is refused as the row refuses a bad body (422 naming the field, or the row's own 400).
 */
export function webUrl(max: number, what: string) {
  return z
    .string()
    .max(max)
    .refine((v) => v === '' || HTTP_URL.safeParse(v).success, 'must be an http:// or https:// URL')
    .meta({ description: `${what}: an http:// or https:// URL; "" for none` });
}
