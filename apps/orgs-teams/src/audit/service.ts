import type { Database } from '@platform/db';
import { orgsTeamsAuditV1 } from '@platform/proto';
import { bindService, versionOf } from '@platform/service-kit';
import { AuditStore } from './audit-store';

/** The AuditService methods that change nothing; every other one is announced (changes.ts). */
export const AUDIT_READS: readonly (keyof typeof orgsTeamsAuditV1.AuditServiceService)[] = ['getVersion', 'listAuditEvents'];

/** The AuditService binding: the gateway records events and lists them for site admins (it checks who may). */
export function auditService(db: Database) {
  const store = AuditStore.create(db);
  return bindService(orgsTeamsAuditV1.AuditServiceService, {
    getVersion: async () => versionOf('orgs-teams'),
    recordAuditEvent: async (req) => {
      await store.record(req);
      return {};
    },
    recordAuditEvents: async (req) => {
      await store.recordAll(req.events);
      return {};
    },
    listAuditEvents: (req) => store.list(req),
  });
}
