import { z } from 'zod';
import type { orgsTeamsSettingsV1 } from '@platform/proto';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import type { GatewayConfig } from '../../config';
import { sectionRoutes, type OrgRef, type Reply, type Requirement, type Route } from '../../route';
import type { ApiRequest as Request } from '../../api-request';

const route = sectionRoutes({ tag: 'Site settings', backend: 'orgs-teams' });

// Site settings: branding, the email-domain whitelist and the registration toggle.
// Decisions (the administrative organization, ETags): docs/site-settings.md.

/** The spec's BrandingResponse. */
const BrandingJson = z
  .object({
    logo: z.string(),
    favicons: z.record(z.string(), z.string()),
    primaryColor: z.string(),
    runMode: z.string(),
    deploymentType: z.string(),
    isOfflineInstaller: z.boolean(),
    showAppTag: z.boolean(),
    appName: z.string(),
  })
  .meta({ id: 'BrandingResponse' });

function brandingJson(b: orgsTeamsSettingsV1.Branding): z.input<typeof BrandingJson> {
  return {
    logo: b.logo,
    favicons: b.favicons,
    primaryColor: b.primaryColor,
    runMode: b.runMode,
    deploymentType: b.deploymentType,
    isOfflineInstaller: b.isOfflineInstaller,
    showAppTag: b.showAppTag,
    appName: b.appName,
  };
}

/** If-None-Match (RFC 9110 13.1.2): `*`, or a list of entity tags compared weakly. */
function matchesIfNoneMatch(req: Request, etag: string): boolean {
  const header = req.get('if-none-match');
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** The branding answer: with its ETag, `no-cache` so clients revalidate, and 304 when the client has it. */
function brandingReply(req: Request, branding: orgsTeamsSettingsV1.Branding): Reply<z.input<typeof BrandingJson>> {
  const headers = { ETag: branding.etag, 'Cache-Control': 'no-cache' };
  if (req.method === 'GET' && matchesIfNoneMatch(req, branding.etag)) return { status: 304, headers };
  return { body: brandingJson(branding), headers };
}

// JSON clients send null for "not given"; orgs-teams checks the images' content and decoded sizes.
const option = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v ?? undefined);
/**
 * BrandingOptions: each supplied option must have its type and fit its limit, else 400 invalid option; the row takes
 * only a body that gives at least one option a value (`namesAValue`), so `{}` or nulls alone are 422.
 */
const BrandingOptions = z.object({
  logo: option(L.logo),
  favicon: option(L.favicon),
  primaryColor: option(L.color),
  appName: option(L.appName),
  showAppTag: z
    .boolean()
    .nullish()
    .transform((v) => v ?? undefined),
});

/** DomainOpts: `name` is the domain, measured as orgs-teams measures it (without spaces and a trailing dot). */
const DomainOpts = z.object({
  name: z
    .string()
    .refine((n) => n.trim() !== '', 'a domain name such as example.com')
    .refine((n) => n.trim().replace(/\.$/, '').length <= L.domain, `at most ${L.domain} characters`),
});

/**
 * RegistrationOpts as a switch that never fails open: the value is required and a boolean, and no other key is
 * taken, so `{}`, `null` or a misspelled key is 422 and changes nothing (the product's handler read each as false,
 * which opened sign-up).
 */
const RegistrationOpts = z.strictObject({ disableRegistration: z.boolean({ error: 'must be true or false' }) });
const RegistrationJson = z.object({ disableRegistration: z.boolean() }).meta({ id: 'RegistrationOpts' });

/** POST adds a domain to the whitelist, PATCH removes one; both answer the new list. */
function domainChange(method: 'post' | 'patch', summary: string): Route {
  return route({
    method,
    scope: 'write:admin',
    path: '/allowed-domains',
    summary,
    auth: 'token',
    org: 'required',
    requires: [{ on: 'site', permission: 'edit_allowed_domains:site_admin' }],
    body: { schema: DomainOpts, invalid: { status: 400, prefix: 'invalid domain' } },
    response: { status: 200, schema: z.array(z.string()) },
    async handle({ body }, { backends, caller }) {
      const change = { name: body.name, userId: caller.id };
      const settings = backends.orgsTeams.siteSettings;
      return { body: (await (method === 'post' ? settings.addAllowedDomain(change) : settings.removeAllowedDomain(change))).names };
    },
  });
}

/** Branding is site-wide: with an administrative organization configured, only it may change it. */
const ADMIN_ORG_ONLY: Requirement<never, unknown, { config: GatewayConfig; org: OrgRef }> = {
  check: 'with PLATFORM_ADMIN_ORG set (the default), `org` is the administrative organization',
  holds: (_input, { config, org }) => !config.PLATFORM_ADMIN_ORG || org.name.toLowerCase() === config.PLATFORM_ADMIN_ORG.toLowerCase(),
  denied: (_input, { config }) => `branding is managed through the administrative organization ${config.PLATFORM_ADMIN_ORG}`,
};

export const siteSettingsRoutes = [
  route({
    method: 'get',
    scope: 'read:misc',
    path: '/branding',
    summary: 'Branding (ETag; 304 on a matching If-None-Match)',
    auth: 'public',
    response: {
      status: 200,
      schema: BrandingJson,
      also: [{ status: 304, description: 'the client has the current branding (If-None-Match)' }],
    },
    async handle(_input, { kept, req }) {
      return brandingReply(req, await kept.orgsTeams.siteSettings.getBranding({}));
    },
  }),
  route({
    method: 'post',
    scope: 'write:admin',
    path: '/branding',
    summary: 'Change branding options (edit_branding_options:org)',
    auth: 'token',
    org: 'required',
    requires: [{ on: 'org', permission: 'edit_branding_options:org' }],
    checks: [ADMIN_ORG_ONLY],
    body: { schema: BrandingOptions, invalid: { status: 400, prefix: 'invalid option' }, namesAValue: true },
    response: { status: 200, schema: BrandingJson },
    async handle({ body }, { backends, caller, req }) {
      return brandingReply(req, await backends.orgsTeams.siteSettings.updateBranding({ ...body, userId: caller.id }));
    },
  }),
  route({
    method: 'get',
    scope: 'read:misc',
    path: '/allowed-domains',
    summary: 'The email-domain whitelist (empty when none)',
    auth: 'public',
    response: { status: 200, schema: z.array(z.string()) },
    async handle(_input, { kept }) {
      return { body: (await kept.orgsTeams.siteSettings.listAllowedDomains({})).names };
    },
  }),
  domainChange('post', 'Add an allowed email domain (edit_allowed_domains:site_admin); answers the new list'),
  domainChange(
    'patch',
    'Remove an allowed email domain (edit_allowed_domains:site_admin); 400 when it is not in the list; answers the new list',
  ),
  route({
    method: 'get',
    scope: 'read:misc',
    path: '/disable-registration',
    summary: 'Whether new-user registration is disabled',
    auth: 'public',
    response: { status: 200, schema: RegistrationJson },
    async handle(_input, { kept }) {
      const { disableRegistration } = await kept.orgsTeams.siteSettings.getRegistration({});
      return { body: { disableRegistration } };
    },
  }),
  route({
    method: 'post',
    scope: 'write:admin',
    path: '/disable-registration',
    summary: 'Enable or disable new-user registration (update_user_registration:site_admin)',
    auth: 'token',
    org: 'required',
    requires: [{ on: 'site', permission: 'update_user_registration:site_admin' }],
    body: { schema: RegistrationOpts, namesAValue: true },
    response: { status: 200, schema: RegistrationJson },
    async handle({ body }, { backends, caller }) {
      const { disableRegistration } = await backends.orgsTeams.siteSettings.setRegistration({
        disableRegistration: body.disableRegistration,
        userId: caller.id,
      });
      return { body: { disableRegistration } };
    },
  }),
];
