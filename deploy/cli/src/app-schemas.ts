/**
 * Each app's schema, and whether it lives only on a Postgres server (the gateway's: one embedded process is one
 * gateway, which counts sign-in failures in memory). apps.ts names them from here; a restore checks its target with
 * this alone, so that it marks the target before any app's code is loaded.
 */
export const APP_SCHEMAS = {
  authz: { schema: 'authz' },
  orgsTeams: { schema: 'identity' },
  contractsLicensing: { schema: 'contracts' },
  billingDashboard: { schema: 'billing' },
  metricsproxy: { schema: 'metricsproxy' },
  clusters: { schema: 'clusters' },
  marketplaceListener: { schema: 'marketplace' },
  gateway: { schema: 'gateway', serverOnly: true },
} as const;

/** The app schemas of a database: every one on Postgres, all but the server-only ones on the embedded database. */
export function appSchemasOn(embedded: boolean): string[] {
  return Object.values(APP_SCHEMAS)
    .filter((s) => !(embedded && 'serverOnly' in s && s.serverOnly))
    .map((s) => s.schema);
}
