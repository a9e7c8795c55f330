import { createHash } from 'node:crypto';
import { z } from 'zod';
import { InputError } from '@platform/errors';
import { UUID_TEXT } from '@platform/proto';
import { BindingInfo, isPlainObject, type Marketplace } from '../binding-info';

// The webhook bodies (docs/marketplaces.md, "Notification flows") and their checks. Every refusal is a 400 whose
// message names the field, never a 500.

const rfc3339 = z.iso.datetime({ offset: true, error: 'must be an RFC3339 date-time' });

/** ProviderAWebhookNotification and ProviderCWebhookNotification: the same shape, bindingInfo required. */
export const BindingNotification = z.object({
  eventType: z.string().max(64).optional(),
  eventTime: rfc3339.optional(),
  bindingInfo: z.unknown().optional(),
});

/** ProviderBWebhookNotification; `managedResourceGroupId` and `resourceIdParts` are the server's, from `applicationId`. */
export const ProviderBNotification = z.object({
  eventType: z.enum(['PUT', 'DELETE', 'BIND'], { error: 'must be PUT, DELETE or BIND' }),
  applicationId: z.string().max(1024),
  eventTime: rfc3339.optional(),
  provisioningState: z.string().max(64).optional(),
  billingDetails: z.object({ resourceUsageId: z.string().max(255).optional() }).optional(),
  plan: z
    .object({
      publisher: z.string().max(255).optional(),
      product: z.string().max(255).optional(),
      name: z.string().max(255).optional(),
      version: z.string().max(64).optional(),
    })
    .optional(),
  error: z.unknown().optional(),
  bindingInfo: z.unknown().optional(),
});
export type ProviderBNotification = z.output<typeof ProviderBNotification>;

/** The first refusal of a zod parse as one line: "field.path: what is wrong". */
function firstProblem(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0];
  const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** Parses a body or throws a 400 naming the first problem. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, what: string, prefix = ''): z.output<S> {
  if (!isPlainObject(value)) throw new InputError(`${what} must be a JSON object`);
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InputError(`invalid ${what}: ${firstProblem(parsed.error, prefix)}`);
  return parsed.data;
}

/** A notification's binding info, of the marketplace it was sent to (400 otherwise). */
export function bindingInfoOf(value: unknown, marketplace: Marketplace, opts: { requireOptions?: boolean } = {}): BindingInfo {
  if (value === undefined || value === null) throw new InputError('bindingInfo is required');
  const info = parse(BindingInfo, value, 'binding info', 'bindingInfo');
  if (info.marketplace !== marketplace) throw new InputError(`invalid binding info: bindingInfo.marketplace must be ${marketplace}`);
  if (opts.requireOptions && info.options === undefined)
    throw new InputError('invalid binding info: bindingInfo.options must be a JSON object');
  return info;
}

/** What the server reads from a second-provider `applicationId` (a managed application's resource ID). */
export interface ApplicationRef {
  subscriptionId: string;
  managedResourceGroupId: string;
  resourceIdParts: { subscriptionId: string; resourceGroup: string; provider: string; resourceType: string; resourceName: string };
}

const APPLICATION_ID = new RegExp(
  `^/subscriptions/(${UUID_TEXT})/resourceGroups/([\\w.()-]{1,90})/providers/([\\w.]{1,128})/([\\w.]{1,128})/([\\w.-]{1,128})$`,
  'i',
);

/** Parses `/subscriptions/{uuid}/resourceGroups/{rg}/providers/{namespace}/{type}/{name}`; 400 otherwise. */
export function applicationRefOf(applicationId: string): ApplicationRef {
  const m = APPLICATION_ID.exec(applicationId.trim());
  if (!m) {
    throw new InputError(
      'invalid subscription ID: applicationId must be /subscriptions/{subscription UUID}/resourceGroups/{group}/providers/{namespace}/{type}/{name}',
    );
  }
  const [, subscriptionId, resourceGroup, provider, resourceType, resourceName] = m;
  const sub = subscriptionId.toLowerCase();
  return {
    subscriptionId: sub,
    managedResourceGroupId: `/subscriptions/${sub}/resourceGroups/${resourceGroup}`,
    resourceIdParts: { subscriptionId: sub, resourceGroup, provider, resourceType, resourceName },
  };
}

const SECRET_KEY = /password|secret|token|credential/i;

/** A copy of a notification without its secrets (admin password, any secret or token field), for the audit log. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !SECRET_KEY.test(k))
      .map(([k, v]) => [k, withoutSecrets(v)]),
  );
}

/**
 * What tells one delivery of a notification from another: its event time, or, when it has none, a digest of
 * its body without secrets (so the digest never stands for a password).
 */
export function eventKeyOf(eventTime: string | undefined, body: unknown): string {
  if (eventTime) return new Date(eventTime).toISOString();
  return `sha256:${createHash('sha256')
    .update(canonicalJson(withoutSecrets(body)))
    .digest('hex')}`;
}

/** JSON with object keys sorted, so equal bodies digest alike whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

