import type { Database } from '@platform/db';
import { orgsTeamsSettingsV1 } from '@platform/proto';
import { bindService, versionOf } from '@platform/service-kit';
import { SiteSettings, type DeploymentFacts } from './settings';

/** The SiteSettingsService methods that change nothing; every other one is announced (changes.ts). */
export const SITE_SETTINGS_READS: readonly (keyof typeof orgsTeamsSettingsV1.SiteSettingsServiceService)[] = [
  'getVersion',
  'getBranding',
  'listAllowedDomains',
  'getRegistration',
];

/** The SiteSettingsService binding; the gateway has checked the write permissions already. */
export function siteSettingsService(db: Database, facts: DeploymentFacts) {
  const settings = new SiteSettings(db, facts);
  return bindService(orgsTeamsSettingsV1.SiteSettingsServiceService, {
    getVersion: async () => versionOf('orgs-teams'),
    getBranding: () => settings.getBranding(),
    updateBranding: (req) => settings.updateBranding(req),
    listAllowedDomains: async () => ({ names: await settings.listDomains() }),
    addAllowedDomain: async (req) => ({ names: await settings.addDomain(req.name, req.userId) }),
    removeAllowedDomain: async (req) => ({ names: await settings.removeDomain(req.name) }),
    getRegistration: () => settings.getRegistration(),
    setRegistration: (req) => settings.setRegistration(req.disableRegistration, req.userId),
  });
}
