import { createHash } from 'node:crypto';
import type { Database } from '@platform/db';
import { ConflictError, InputError } from '@platform/errors';
import type { orgsTeamsSettingsV1 } from '@platform/proto';
import { TEXT_LIMITS } from '@platform/service-kit';
import { isInertSvg, sniffImage, type ImageType } from '../avatars/image';

/** What the deployment says about itself in the branding answer (from configuration, not settable). */
export interface DeploymentFacts {
  runMode: string;
  deploymentType: string;
  isOfflineInstaller: boolean;
}

export const DEFAULT_APP_NAME = 'Platform';
export const DEFAULT_PRIMARY_COLOR = '#1f6feb';
export const MAX_APP_NAME_LENGTH = TEXT_LIMITS.appName;
/** Decoded image sizes; a logo and a favicon together stay well inside the gateway's 1 MB JSON limit. */
export const MAX_LOGO_BYTES = 256 * 1024;
export const MAX_FAVICON_BYTES = 64 * 1024;

const LOGO_TYPES: readonly ImageType[] = ['png', 'jpeg', 'gif', 'webp', 'svg'];
const FAVICON_TYPES: readonly ImageType[] = ['png', 'ico', 'gif', 'jpeg', 'webp', 'svg'];
/** Declared data-URI media types and the sniffed type each must be. */
const DECLARED: Record<string, ImageType> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'image/x-icon': 'ico',
  'image/vnd.microsoft.icon': 'ico',
};

const svgDataUri = (svg: string) => `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
/** The built-in logo and favicon: a "P" on a rounded square in the default primary color. */
const DEFAULT_MARK = svgDataUri(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#1f6feb"/>' +
    '<path fill="#fff" fill-rule="evenodd" d="M20 14h15a13 13 0 0 1 0 26h-7v10h-8zM28 22v10h7a5 5 0 0 0 0-10z"/></svg>',
);

const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const DATA_URI = /^data:([a-z]+\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/;
// A DNS label: letters, digits and hyphens, 1 to 63, not starting or ending with a hyphen.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

interface SettingsRow {
  id: number;
  app_name: string | null;
  primary_color: string | null;
  show_app_tag: boolean | null;
  logo: string | null;
  favicon: string | null;
  disable_registration: boolean;
  /** The row's xmin: changes with every update of the row, whatever its timestamp precision. */
  version: string;
}

const invalidOption = (field: string, description: string) =>
  new InputError(`invalid option ${field}: ${description}`, [{ field, description }]);

/** A base64 image data URI of an allowed type and size, whose bytes are what it declares; else 400. */
function checkImageUri(field: string, value: string, types: readonly ImageType[], maxBytes: number): { uri: string; size: string } {
  const m = DATA_URI.exec(value.trim());
  if (!m) throw invalidOption(field, 'must be a base64 image data URI (data:image/...;base64,...)');
  const declared = DECLARED[m[1]];
  if (!declared || !types.includes(declared)) {
    throw invalidOption(field, `image type ${m[1]} is not accepted (${types.map((t) => t.toUpperCase()).join(', ')})`);
  }
  if (m[2].length % 4 !== 0) throw invalidOption(field, 'the base64 data is malformed');
  const bytes = Buffer.from(m[2], 'base64');
  if (bytes.length === 0) throw invalidOption(field, 'the image is empty');
  if (bytes.length > maxBytes) throw invalidOption(field, `the image is larger than ${maxBytes} bytes`);
  const sniffed = sniffImage(bytes);
  if (!sniffed || sniffed.type !== declared) throw invalidOption(field, `the data is not an image of type ${m[1]}`);
  if (sniffed.type === 'svg' && !isInertSvg(bytes)) throw invalidOption(field, 'SVG images may not contain scripts or event handlers');
  return { uri: `data:${m[1]};base64,${m[2]}`, size: sniffed.type === 'svg' ? 'any' : `${sniffed.width}x${sniffed.height}` };
}

/** A lower-cased email domain: at least two DNS labels, at most 253 characters, not an IP address; else 400. */
export function normalizeDomain(name: string): string {
  const domain = name.trim().toLowerCase().replace(/\.$/, '');
  const labels = domain.split('.');
  const ok =
    domain.length > 0 &&
    domain.length <= 253 &&
    labels.length >= 2 &&
    labels.every((l) => LABEL.test(l)) &&
    // The top-level label is never all digits, which also rules out IPv4 addresses.
    !/^\d+$/.test(labels[labels.length - 1]);
  if (!ok) {
    throw new InputError(`invalid domain ${JSON.stringify(name.slice(0, 260))}`, [
      { field: 'name', description: 'must be a domain name such as example.com' },
    ]);
  }
  return domain;
}

/**
 * The site-wide settings in the identity schema: branding (one row; null options fall back to
 * the built-in defaults), the email-domain whitelist, and the registration toggle.
 */
export class SiteSettings {
  constructor(
    private readonly db: Database,
    private readonly facts: DeploymentFacts,
  ) {}

  private async row(): Promise<SettingsRow> {
    const row = await this.db.table<SettingsRow>('site_settings').where({ id: 1 }).first('*', this.db.knex.raw('xmin::text as version'));
    if (!row) throw new Error('site_settings has no row; the migration inserts it');
    return row;
  }

  // The public GET /branding is frequent; the answer is worked out again only when the row changed.
  private cached?: { stamp: string; branding: orgsTeamsSettingsV1.Branding };

  private branding(row: SettingsRow): orgsTeamsSettingsV1.Branding {
    const stamp = row.version;
    if (this.cached?.stamp === stamp) return this.cached.branding;
    const branding = this.compute(row, stamp);
    this.cached = { stamp, branding };
    return branding;
  }

  private compute(row: SettingsRow, stamp: string): orgsTeamsSettingsV1.Branding {
    const favicon = row.favicon ?? DEFAULT_MARK;
    const size = row.favicon ? checkImageUri('favicon', row.favicon, FAVICON_TYPES, Infinity).size : 'any';
    return {
      logo: row.logo ?? DEFAULT_MARK,
      favicons: { [size]: favicon },
      primaryColor: row.primary_color ?? DEFAULT_PRIMARY_COLOR,
      runMode: this.facts.runMode,
      deploymentType: this.facts.deploymentType,
      isOfflineInstaller: this.facts.isOfflineInstaller,
      showAppTag: row.show_app_tag ?? false,
      appName: row.app_name ?? DEFAULT_APP_NAME,
      etag: `"${createHash('sha256')
        .update(JSON.stringify([stamp, this.facts]))
        .digest('base64url')}"`,
    };
  }

  async getBranding(): Promise<orgsTeamsSettingsV1.Branding> {
    return this.branding(await this.row());
  }

  /** Changes the supplied options; "" resets one to its default. Every option is checked before anything is written. */
  async updateBranding(req: orgsTeamsSettingsV1.UpdateBrandingRequest): Promise<orgsTeamsSettingsV1.Branding> {
    const changes: Partial<SettingsRow> = {};
    if (req.primaryColor !== undefined) {
      const color = req.primaryColor.trim();
      if (color && !HEX_COLOR.test(color)) throw invalidOption('primaryColor', 'must be a hex color such as #1f6feb');
      changes.primary_color = color ? color.toLowerCase() : null;
    }
    if (req.appName !== undefined) {
      const name = req.appName.trim();
      if (name.length > MAX_APP_NAME_LENGTH) throw invalidOption('appName', `at most ${MAX_APP_NAME_LENGTH} characters`);
      if (/[\u0000-\u001f\u007f]/.test(name)) throw invalidOption('appName', 'may not contain control characters');
      changes.app_name = name || null;
    }
    if (req.showAppTag !== undefined) changes.show_app_tag = req.showAppTag;
    if (req.logo !== undefined) changes.logo = req.logo.trim() ? checkImageUri('logo', req.logo, LOGO_TYPES, MAX_LOGO_BYTES).uri : null;
    if (req.favicon !== undefined) {
      changes.favicon = req.favicon.trim() ? checkImageUri('favicon', req.favicon, FAVICON_TYPES, MAX_FAVICON_BYTES).uri : null;
    }
    const [row] = await this.db
      .table('site_settings')
      .where({ id: 1 })
      .update({ ...changes, updated_by: req.userId || null, updated_at: this.db.knex.fn.now() })
      .returning(['*', this.db.knex.raw('xmin::text as version')]);
    return this.branding(row as SettingsRow);
  }

  async listDomains(): Promise<string[]> {
    const rows: { name: string }[] = await this.db.table('allowed_domains').orderBy('name').select('name');
    return rows.map((r) => r.name);
  }

  /** Whitelists a domain; 400 when it is not a domain name, 409 when it is already there. */
  async addDomain(name: string, userId: number): Promise<string[]> {
    const domain = normalizeDomain(name);
    const inserted = await this.db
      .table('allowed_domains')
      .insert({ name: domain, created_by: userId || null })
      .onConflict('name')
      .ignore()
      .returning('name');
    if (inserted.length === 0) throw new ConflictError(`domain ${domain} is already allowed`);
    return this.listDomains();
  }

  /** Removes a domain; 400 when it is not a domain name or not whitelisted. */
  async removeDomain(name: string): Promise<string[]> {
    const domain = normalizeDomain(name);
    const removed = await this.db.table('allowed_domains').where({ name: domain }).delete();
    if (removed === 0) {
      throw new InputError(`domain ${domain} is not in the allowed domains`, [
        { field: 'name', description: 'not in the allowed domains' },
      ]);
    }
    return this.listDomains();
  }

  async getRegistration(): Promise<orgsTeamsSettingsV1.Registration> {
    return { disableRegistration: (await this.row()).disable_registration };
  }

  async setRegistration(disable: boolean, userId: number): Promise<orgsTeamsSettingsV1.Registration> {
    await this.db
      .table('site_settings')
      .where({ id: 1 })
      .update({ disable_registration: disable, updated_by: userId || null, updated_at: this.db.knex.fn.now() });
    return this.getRegistration();
  }
}
