import { z } from 'zod';
import { QUOTA_METRICS, type contractsV1 } from '@platform/proto';
import { TEXT_LIMITS } from '@platform/service-kit';
import { formFile, type FormFile, type MultipartSpec } from '../../multipart';

/**
 * The multipart form of POST /contracts and PUT /contracts/{id} (docs/contracts.md). Every Contract field is a
 * text field; lists are repeated fields or one field holding a JSON array; `emails` and `quota` are one field
 * holding a JSON object (`emails` may also come as `emails[licenseUsers]` fields); booleans are `true`/`false`,
 * times Unix seconds. The optional `document` part is the contract document. What is malformed here (not
 * multipart, broken JSON, a wrong type) is 422; what is well-formed but wrong (an empty products list, an
 * invalid email, an unknown product, a bad quota) is for contracts-licensing to refuse with 400.
 */

export const CONTRACT_FORM: MultipartSpec = {
  file: 'document',
  maxBytes: (config) => config.CONTRACT_DOCUMENT_MAX_BYTES,
  tooLarge: 413,
  fields: 64,
  fieldSize: 64 * 1024,
};

const once = (what: string) => z.string({ error: `must be given once, as ${what}` });

/**
 * A text field read by `read` (which reports what is wrong with ctx.addIssue), documented by `meta` alone: the
 * API document says what the field holds, not how the form library hands it over.
 */
function field<T>(read: (v: unknown, ctx: z.RefinementCtx) => T, meta: Record<string, unknown>) {
  return z
    .unknown()
    .transform((v, ctx) => read(v, ctx))
    .meta(meta);
}

const wrong = (ctx: z.RefinementCtx, message: string) => {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
};

/** JSON text in a text field, then the schema; a nested form field (`emails[x]`) arrives as an object already. */
function json<T extends z.ZodType>(schema: T, what: string) {
  return z
    .unknown()
    .transform((v, ctx) => {
      if (typeof v !== 'string') return v;
      try {
        return JSON.parse(v) as unknown;
      } catch {
        return wrong(ctx, `must be ${what} as JSON text`);
      }
    })
    .pipe(schema);
}

/** A list: repeated fields, one field with a JSON array, or one plain value (a one-element list). */
const list = field(
  (v, ctx): string[] => {
    const values = Array.isArray(v) ? v : [v];
    if (!values.every((x) => typeof x === 'string')) return wrong(ctx, 'must be text fields');
    if (values.length === 1 && values[0].trim().startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(values[0]);
        if (Array.isArray(parsed) && parsed.every((x) => typeof x === 'string')) return parsed as string[];
      } catch {
        // reported below
      }
      return wrong(ctx, 'must be a JSON array of strings');
    }
    return values.length === 1 && values[0] === '' ? [] : (values as string[]);
  },
  { type: 'array', items: { type: 'string' }, description: 'repeated fields, or one field with a JSON array' },
);

const flag = field(
  (v, ctx) => {
    const s = typeof v === 'string' ? v.trim().toLowerCase() : undefined;
    return s === 'true' ? true : s === 'false' ? false : wrong(ctx, 'must be given once, as true or false');
  },
  { type: 'boolean' },
);

const seconds = field(
  (v, ctx) => (typeof v === 'string' && /^-?\d{1,12}$/.test(v.trim()) ? Number(v) : wrong(ctx, 'must be given once, as Unix seconds')),
  { type: 'integer', format: 'int64', description: 'Unix seconds' },
);

/** One recipient list of `emails`: a JSON array, or (nested form fields) one or repeated values. */
const recipients = z.union([z.string().transform((s) => [s]), z.array(z.string())]);
const EmailsInput = z
  .strictObject({
    contactPerson: recipients.optional(),
    signingAuthority: recipients.optional(),
    licenseUsers: recipients.optional(),
    financeTeam: recipients.optional(),
    usageAlertClient: recipients.optional(),
    usageAlertAdmin: recipients.optional(),
  })
  .meta({ id: 'ContractEmailsInput' });

const QuotaInput = z
  .strictObject({
    enabled: z.boolean().optional(),
    // Any text passes here: contracts-licensing refuses an unknown metric with the 400 the spec gives a bad quota.
    metric: z
      .string()
      .optional()
      .meta({
        enum: ['', ...QUOTA_METRICS],
        description:
          'What the limit counts (docs/contracts.md): cpu_core_month and memory_gib_month (hours over 730), or cpu-core-hours, memory-gib-hours, storage-gib-hours, object-hours; empty only when the quota is disabled. Answered as sent',
      }),
    limit: z.number().optional(),
    alertThresholds: z.array(z.number().int()).optional(),
    disableLicenseOnLimitReached: z.boolean().optional(),
  })
  .meta({ title: 'QuotaInput' });

/** What a text field of JSON holds, for the API document: the form carries it as text, so its shape is only told. */
function contentSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return json;
}

const restrictions = once('JSON text').refine((v) => {
  if (v.trim() === '') return true;
  try {
    JSON.parse(v);
    return true;
  } catch {
    return false;
  }
}, 'must be JSON text');

const fields = {
  name: once('text').max(TEXT_LIMITS.contractName, `at most ${TEXT_LIMITS.contractName} characters`).optional(),
  features: list.optional(),
  emails: json(EmailsInput, 'an object of recipient lists').optional().meta({
    type: 'string',
    description: 'JSON object: contactPerson, signingAuthority, licenseUsers, financeTeam, usageAlertClient, usageAlertAdmin',
  }),
  quota: json(QuotaInput, 'an object')
    .optional()
    .meta({
      type: 'string',
      description: 'JSON object: enabled, metric, limit, alertThresholds, disableLicenseOnLimitReached',
      contentMediaType: 'application/json',
      contentSchema: contentSchema(QuotaInput),
    }),
  start: seconds.optional(),
  end: seconds.optional(),
  allowOffline: flag.optional(),
  autoAssignCluster: flag.optional(),
  disableAnalytics: flag.optional(),
  enableClientBilling: flag.optional(),
  restrictions: restrictions.optional(),
  document: formFile.optional().meta({ description: 'The contract document (at most CONTRACT_DOCUMENT_MAX_BYTES)' }),
};

export const CreateContractForm = z
  .strictObject({
    // A list sent as repeated fields is no field at all when empty: absent is the empty list, which
    // contracts-licensing refuses with the spec's 400 like `products=[]`.
    products: list.optional().meta({
      description: 'One contract per product, at least one (400 otherwise): repeated fields, or one field with a JSON array',
    }),
    ...fields,
  })
  .meta({ id: 'CreateContractForm' });

const count = field(
  (v, ctx) => (typeof v === 'string' && /^\d{1,18}$/.test(v.trim()) ? Number(v) : wrong(ctx, 'must be given once, as an integer')),
  { type: 'integer', format: 'int64' },
);

/** A bound cluster as GET answers it: what binding sets is compared, what the platform computes is not. */
const BoundClusterInput = z.looseObject({
  cluster: z.string(),
  displayName: z.string().optional(),
  clusterStatus: z.looseObject({ tags: z.array(z.string()).optional() }).optional(),
});

/**
 * What GET answers but PUT does not set. The product's clients read a contract, edit a field and send the whole
 * object back, so these are taken and ignored when they are what the contract holds, and refused with 400 naming
 * the field when they try to change it (`readOnlyChanges`).
 */
const readOnly = {
  id: count.optional().meta({ description: 'Read-only: must be the contract in the path' }),
  uid: count.optional().meta({ description: 'Read-only: the owner account id' }),
  orgOrUser: once('text').optional().meta({ description: 'Read-only: the owner account’s slug' }),
  product: once('text').optional().meta({ description: 'Read-only: a contract covers one product for good' }),
  revoked: flag.optional().meta({ description: 'Read-only: revoke with POST /contracts/{id}/revoke' }),
  documentPath: once('text').optional().meta({ description: 'Read-only: a `document` part replaces the document' }),
  clusters: json(z.array(BoundClusterInput), 'an array of bound clusters')
    .optional()
    .meta({ type: 'string', description: 'Read-only, JSON: bind, unbind, rename and retag through /contracts/{id}/clusters' }),
  associatedCluster: json(z.unknown(), 'a bound cluster')
    .optional()
    .meta({ type: 'string', description: 'Read-only, JSON: the cluster in context of a read; ignored' }),
};

/** The read-only fields an update may carry. */
export const READ_ONLY_FIELDS = Object.keys(readOnly) as (keyof typeof readOnly)[];

export const UpdateContractForm = z.strictObject({ ...fields, ...readOnly }).meta({ id: 'UpdateContractForm' });

/**
 * The read-only fields of an update that differ from the contract as it is (`current`, read by the gateway just
 * before): each one names the field and how it is changed instead. An empty list when the form sends none or
 * sends them unchanged.
 */
export function readOnlyChanges(form: z.output<typeof UpdateContractForm>, current: contractsV1.Contract): { field: string; description: string }[] {
  const out: { field: string; description: string }[] = [];
  const differs = (field: string, given: unknown, is: unknown, description: string) => {
    if (given !== undefined && given !== is) out.push({ field, description });
  };
  differs('id', form.id, current.id, `is contract ${current.id}, the one in the path`);
  differs('uid', form.uid, current.ownerId, 'the owner account of a contract cannot change');
  differs('orgOrUser', form.orgOrUser, current.ownerLogin, 'the owner account of a contract cannot change');
  differs('product', form.product, current.product, 'a contract covers one product for good; create another contract');
  differs('revoked', form.revoked, current.revoked, 'revoke with POST /contracts/{id}/revoke; a revoked contract stays revoked');
  differs('documentPath', form.documentPath, current.documentPath, 'send a `document` part to replace the document');
  if (form.clusters) {
    const key = (c: { cluster: string; displayName?: string; tags?: string[] }) =>
      JSON.stringify([c.cluster.toLowerCase(), c.displayName ?? '', [...(c.tags ?? [])].sort()]);
    const given = form.clusters.map((c) => key({ ...c, tags: c.clusterStatus?.tags })).sort();
    const bound = current.clusters.map((c) => key({ ...c, tags: c.clusterStatus?.tags })).sort();
    if (JSON.stringify(given) !== JSON.stringify(bound))
      out.push({ field: 'clusters', description: 'bind, unbind, rename and retag clusters through /contracts/{id}/clusters' });
  }
  return out;
}

type FormOut = z.output<typeof UpdateContractForm>;

/** The proto's fields from a form: only those given change on update. */
export function contractFields(form: FormOut): contractsV1.ContractFields {
  const e = form.emails;
  const q = form.quota;
  return {
    name: form.name,
    features: form.features ?? [],
    featuresGiven: form.features !== undefined,
    emails: e && {
      contactPerson: e.contactPerson ?? [],
      signingAuthority: e.signingAuthority ?? [],
      licenseUsers: e.licenseUsers ?? [],
      financeTeam: e.financeTeam ?? [],
      usageAlertClient: e.usageAlertClient ?? [],
      usageAlertAdmin: e.usageAlertAdmin ?? [],
    },
    quota: q && {
      enabled: q.enabled ?? false,
      metric: q.metric ?? '',
      limit: q.limit ?? 0,
      alertThresholds: q.alertThresholds ?? [],
      disableLicenseOnLimitReached: q.disableLicenseOnLimitReached ?? false,
    },
    startUnix: form.start,
    endUnix: form.end,
    allowOffline: form.allowOffline,
    autoAssignCluster: form.autoAssignCluster,
    disableAnalytics: form.disableAnalytics,
    enableClientBilling: form.enableClientBilling,
    restrictions: form.restrictions,
  };
}

/** The uploaded document as the proto carries it. */
export function documentOf(file: FormFile | undefined): contractsV1.Document | undefined {
  if (!file) return undefined;
  return { fileName: file.fileName, contentType: file.contentType || 'application/octet-stream', content: file.content };
}

/**
 * JSON bodies. A cluster that is not a UUID is left to contracts-licensing, which answers 400 as the spec says
 * ("invalid UUID"); a body of the wrong shape is 422.
 */
export const ClusterReferences = z
  .array(
    z
      .object({
        cluster: z.string().meta({ description: 'The cluster UUID' }),
        displayName: z.string().optional(),
        tags: z.array(z.string()).optional(),
      })
      .meta({ id: 'ClusterReference' }),
  )
  .meta({ description: 'The clusters to bind' });

export const ExtendBody = z
  .object({ end: z.number().int().meta({ description: 'The new end, Unix seconds' }) })
  .meta({ id: 'ExtendContract' });

export const RenameBody = z.object({ clusterName: z.string() }).meta({ id: 'ContractClusterName' });
export const TagsBody = z.object({ tags: z.array(z.string()) }).meta({ id: 'ContractClusterTags' });
export const ClustersBody = z.object({ clusters: z.array(z.string()) }).meta({ id: 'ClusterUUIDs' });

export const AssignClusterBody = z
  .object({
    clusterId: z.string().meta({ description: 'The cluster UUID' }),
    displayName: z.string().optional(),
    contractIds: z.array(z.number().int()),
  })
  .meta({ id: 'AssignCluster' });

export const PreferencesBody = z
  .object({
    autoAssignCluster: z.boolean().optional(),
    usageAlertClient: z
      .union([z.string().transform((s) => [s]), z.array(z.string())])
      .optional()
      .meta({ description: 'Recipients; a single string is a one-element list' }),
  })
  .meta({ id: 'ContractPreferences' });
