import type { Request } from 'express';
import { InputError, NotAllowedError, ValidationError } from '@platform/errors';
import type { orgsTeamsSettingsV1 } from '@platform/proto';
import { TEXT_LIMITS } from '@platform/service-kit';
import type { Route, RouteResult } from '../route';

/** BrandingResponse of spec 2.7. */
function brandingJson(b: orgsTeamsSettingsV1.Branding) {
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
function brandingResult(req: Request, branding: orgsTeamsSettingsV1.Branding): RouteResult {
  const body = brandingJson(branding);
  const etag = branding.etag;
  const headers = { ETag: etag, 'Cache-Control': 'no-cache' };
  if (req.method === 'GET' && matchesIfNoneMatch(req, etag)) return { status: 304, headers };
  return { body, headers };
}

/** The body must be a JSON object; anything else is a malformed body (422). */
function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError('the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** The longest value of each text option (docs/limits.md); orgs-teams checks the images' decoded sizes. */
const OPTION_LIMITS = {
  logo: TEXT_LIMITS.logo,
  favicon: TEXT_LIMITS.favicon,
  primaryColor: TEXT_LIMITS.color,
  appName: TEXT_LIMITS.appName,
} as const;

/** BrandingOptions: each supplied option must have its type and fit its limit, else 400 invalid option (spec 4.8). */
function brandingOptions(raw: unknown): Omit<orgsTeamsSettingsV1.UpdateBrandingRequest, 'userId'> {
  const body = objectBody(raw);
  const out: Omit<orgsTeamsSettingsV1.UpdateBrandingRequest, 'userId'> = {};
  for (const [field, max] of Object.entries(OPTION_LIMITS) as [keyof typeof OPTION_LIMITS, number][]) {
    const v = body[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string')
      throw new InputError(`invalid option ${field}: must be a string`, [{ field, description: 'must be a string' }]);
    if (v.length > max)
      throw new InputError(`invalid option ${field}: at most ${max} characters`, [{ field, description: `at most ${max} characters` }]);
    out[field] = v;
  }
  const tag = body.showAppTag;
  if (tag !== undefined && tag !== null) {
    if (typeof tag !== 'boolean') {
      throw new InputError('invalid option showAppTag: must be a boolean', [{ field: 'showAppTag', description: 'must be a boolean' }]);
    }
    out.showAppTag = tag;
  }
  return out;
}

/** DomainOpts: `name` is the domain; missing or not a string is an invalid domain (400). */
function domainName(raw: unknown): string {
  const name = objectBody(raw).name;
  if (typeof name !== 'string' || !name.trim()) {
    throw new InputError('invalid domain: name is required', [{ field: 'name', description: 'a domain name such as example.com' }]);
  }
  // Measured as orgs-teams measures it: without surrounding spaces and a trailing dot.
  const max = TEXT_LIMITS.domain;
  if (name.trim().replace(/\.$/, '').length > max) {
    throw new InputError(`invalid domain: at most ${max} characters`, [{ field: 'name', description: `at most ${max} characters` }]);
  }
  return name;
}

/** Site settings (spec 4.8): branding, the email-domain whitelist and the registration toggle. */
export const settingsRoutes: Route[] = [
  {
    method: 'get',
    path: '/branding',
    summary: 'Branding (ETag; 304 on a matching If-None-Match)',
    auth: 'public',
    service: 'orgs-teams',
    async handle(req, { backends, requestId }) {
      return brandingResult(req, await backends.siteSettings.getBranding({}, { requestId }));
    },
  },
  {
    method: 'post',
    path: '/branding',
    summary: 'Change branding options (edit_branding_options:org)',
    auth: 'token',
    org: 'required',
    check: { permission: 'edit_branding_options:org', on: 'org' },
    service: 'orgs-teams',
    async handle(req, { backends, requestId, caller, config, org }) {
      // Branding is site-wide: with an administrative organization configured, only it may change it.
      const adminOrg = config.PLATFORM_ADMIN_ORG;
      if (adminOrg && org!.name.toLowerCase() !== adminOrg.toLowerCase()) {
        throw new NotAllowedError(`branding is managed through the administrative organization ${adminOrg}`);
      }
      const branding = await backends.siteSettings.updateBranding({ ...brandingOptions(req.body), userId: caller!.id }, { requestId });
      return brandingResult(req, branding);
    },
  },
  {
    method: 'get',
    path: '/allowed-domains',
    summary: 'The email-domain whitelist (empty when none)',
    auth: 'public',
    service: 'orgs-teams',
    async handle(_req, { backends, requestId }) {
      return { body: (await backends.siteSettings.listAllowedDomains({}, { requestId })).names };
    },
  },
  {
    method: 'post',
    path: '/allowed-domains',
    summary: 'Add an allowed email domain (edit_allowed_domains:site_admin); answers the new list',
    auth: 'token',
    org: 'required',
    check: { permission: 'edit_allowed_domains:site_admin', on: 'site' },
    service: 'orgs-teams',
    async handle(req, { backends, requestId, caller }) {
      const { names } = await backends.siteSettings.addAllowedDomain({ name: domainName(req.body), userId: caller!.id }, { requestId });
      return { body: names };
    },
  },
  {
    method: 'patch',
    path: '/allowed-domains',
    summary: 'Remove an allowed email domain (edit_allowed_domains:site_admin); answers the new list',
    auth: 'token',
    org: 'required',
    check: { permission: 'edit_allowed_domains:site_admin', on: 'site' },
    service: 'orgs-teams',
    async handle(req, { backends, requestId, caller }) {
      const { names } = await backends.siteSettings.removeAllowedDomain({ name: domainName(req.body), userId: caller!.id }, { requestId });
      return { body: names };
    },
  },
  {
    method: 'get',
    path: '/disable-registration',
    summary: 'Whether new-user registration is disabled',
    auth: 'public',
    service: 'orgs-teams',
    async handle(_req, { backends, requestId }) {
      const { disableRegistration } = await backends.siteSettings.getRegistration({}, { requestId });
      return { body: { disableRegistration } };
    },
  },
  {
    method: 'post',
    path: '/disable-registration',
    summary: 'Enable or disable new-user registration (update_user_registration:site_admin)',
    auth: 'token',
    org: 'required',
    check: { permission: 'update_user_registration:site_admin', on: 'site' },
    service: 'orgs-teams',
    async handle(req, { backends, requestId, caller }) {
      const value = objectBody(req.body).disableRegistration;
      if (value !== undefined && value !== null && typeof value !== 'boolean') {
        throw new ValidationError('disableRegistration: must be a boolean', [
          { field: 'body.disableRegistration', description: 'must be a boolean' },
        ]);
      }
      // As the product's Go handler reads RegistrationOpts: an absent field is false (registration enabled).
      const { disableRegistration } = await backends.siteSettings.setRegistration(
        { disableRegistration: value === true, userId: caller!.id },
        { requestId },
      );
      return { body: { disableRegistration } };
    },
  },
];
