import { z } from 'zod';
import type { orgsTeamsV1, serviceAccountsV1 } from '@platform/proto';
import { GITEA_ZERO_TIME, giteaTime } from '../../gitea';
import { rfc3339 } from '../../presenters';

const dateTime = z.string().meta({ format: 'date-time' });

/** A service account (docs/service-accounts.md). */
export const ServiceAccountJson = z
  .object({
    id: z.number().int(),
    name: z.string().meta({ description: 'Its login, unique among users, organizations and service accounts' }),
    description: z.string(),
    org: z.string().nullable().meta({ description: 'The organization it belongs to; null for a site-wide one' }),
    roles: z.array(z.number().int()).meta({ description: 'Ids of the custom roles of its organization it holds' }),
    site_admin: z.boolean().meta({ description: 'A site-wide service account that is a site admin' }),
    kubernetes_subjects: z
      .array(z.string())
      .meta({ description: 'Kubernetes ServiceAccounts (`<namespace>/<name>`) whose tokens authenticate as it' }),
    active: z.boolean().meta({ description: 'An inactive service account authenticates nobody' }),
    created_at: dateTime,
    created_by: z
      .object({ id: z.number().int(), login: z.string() })
      .nullable()
      .meta({ description: 'Who created it; null once that account is gone' }),
  })
  .meta({ id: 'ServiceAccount' });

export function serviceAccountJson(a: serviceAccountsV1.ServiceAccount, org: string | null): z.input<typeof ServiceAccountJson> {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    org,
    roles: a.roleIds,
    site_admin: a.siteAdmin,
    kubernetes_subjects: a.kubernetesSubjects,
    active: a.active,
    created_at: rfc3339(a.createdUnix),
    created_by: a.createdById ? { id: a.createdById, login: a.createdByLogin } : null,
  };
}

/** A service account's token as created: the secret `sha1` is shown only now. */
export const CreatedServiceAccountTokenJson = z
  .object({
    id: z.number().int(),
    name: z.string(),
    sha1: z.string().meta({ description: 'The token; shown only in this answer' }),
    token_last_eight: z.string(),
    created_at: dateTime,
  })
  .meta({ id: 'CreatedServiceAccountToken' });

export function createdTokenJson(t: serviceAccountsV1.CreatedServiceAccountToken): z.input<typeof CreatedServiceAccountTokenJson> {
  return { id: t.id, name: t.name, sha1: t.sha1, token_last_eight: t.tokenLastEight, created_at: rfc3339(t.createdUnix) };
}

/** A service account's token as listed: never its secret. */
export const ServiceAccountTokenJson = z
  .object({
    id: z.number().int(),
    name: z.string(),
    token_last_eight: z.string(),
    created_at: dateTime,
    last_used_at: dateTime.meta({ description: `When it last authenticated (to the minute); Gitea's zero time ${GITEA_ZERO_TIME} when never` }),
  })
  .meta({ id: 'ServiceAccountToken' });

export function tokenJson(t: orgsTeamsV1.TokenInfo): z.input<typeof ServiceAccountTokenJson> {
  return {
    id: t.id,
    name: t.name,
    token_last_eight: t.tokenLastEight,
    created_at: rfc3339(t.createdUnix),
    last_used_at: giteaTime(t.lastUsedUnix),
  };
}
