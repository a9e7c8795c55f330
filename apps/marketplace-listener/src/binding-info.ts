import { z } from 'zod';

// What a marketplace binds (docs/marketplaces.md, "BindingInfo"): the marketplaces and the binding info their
// notifications carry. Its own module because both the webhook routes (which check the bodies) and the
// subscriptions listener (which acts on a checked binding) read it; neither owns it.

export const MARKETPLACES = ['ProviderA', 'ProviderB', 'ProviderC'] as const;
export type Marketplace = (typeof MARKETPLACES)[number];

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const jsonObject = z.custom<Record<string, unknown>>(isPlainObject, { message: 'must be a JSON object' });
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

/** Installer IDs are path segments of the download link and object-storage-like keys. */
export const INSTALLER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** BindingInfo. `adminPassword` is sensitive: it is kept only as a hash and never audited. */
export const BindingInfo = z.object({
  marketplace: z.enum(MARKETPLACES, { error: 'must be ProviderA, ProviderB or ProviderC' }),
  installerId: z.string().trim().regex(INSTALLER_ID, 'must be an installer ID (letters, digits, ".", "_", "-"; at most 64)'),
  clusterId: z.string().trim().min(1, 'must not be empty').max(255),
  providerAAccountID: z.string().trim().max(64).optional(),
  adminUsername: z
    .string()
    .regex(/^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/, 'must be a user name')
    .optional(),
  adminPassword: z.string().min(1).max(256).optional(),
  domainWhiteList: z.array(z.string().trim().toLowerCase().regex(DOMAIN, 'must be a domain name')).max(100).optional(),
  options: jsonObject.optional(),
});
export type BindingInfo = z.output<typeof BindingInfo>;
