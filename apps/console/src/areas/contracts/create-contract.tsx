import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, ok, type Schema } from '../../api/client';
import { Field, Form, Section, Select, Show, useAction } from '../../ui';
import { TextArea } from '../../ui/controls';
import { Check, SuggestField } from './inputs';
import { QUOTA_METRICS } from '../../ui/quantities';
import { adminRoutes, useContractChange, useOwnerSuggestions, useProducts, type Contract } from './api';
import { contractTitle, dateToUnix, emailList, text, unixToDate } from './terms';

/**
 * `POST /contracts`: the multipart form of docs/contracts.md, one contract per product chosen, with an optional
 * document. Everything the form can check is checked before sending; contracts-licensing's 400 (an unsupported
 * feature, an invalid address) is shown with its message otherwise.
 */

type CreateForm = Schema<'CreateContractForm'>;

interface Product {
  key: string;
  title: string;
  features: string[];
  defaults: string[];
}

/** The catalog is free-form in the API document (alias → plan info): read the fields the form needs, defensively. */
function productsOf(catalog: Record<string, unknown>): Product[] {
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return Object.entries(catalog).map(([key, info]) => {
    const o = (info !== null && typeof info === 'object' ? info : {}) as Record<string, unknown>;
    return { key, title: typeof o.title === 'string' ? o.title : key, features: strings(o.features), defaults: strings(o.defaultFeatures) };
  });
}

// CONTRACT_DOCUMENT_MAX_BYTES is at most 3 MiB (so the document fits a gRPC message); a smaller setting answers 413.
const MAX_DOCUMENT_BYTES = 3 * 1024 * 1024;

const RECIPIENT_FIELDS: [name: string, label: string][] = [
  ['licenseUsers', 'License users'],
  ['usageAlertClient', 'Usage alert recipients'],
  ['usageAlertAdmin', 'Usage alert admins'],
  ['contactPerson', 'Contact person'],
  ['signingAuthority', 'Signing authority'],
  ['financeTeam', 'Finance team'],
];

const FLAGS: [name: 'allowOffline' | 'autoAssignCluster' | 'disableAnalytics' | 'enableClientBilling', label: string][] = [
  ['allowOffline', 'Allow offline licenses (air-gapped clusters)'],
  ['autoAssignCluster', 'Bind new clusters automatically'],
  ['disableAnalytics', 'Disable analytics'],
  ['enableClientBilling', 'Enable client billing'],
];

interface Read {
  owner: string;
  body: CreateForm;
  document?: File;
}

/** The form as the API's fields, or the first thing wrong with it. */
function readForm(data: FormData, products: Product[]): Read | string {
  const chosen = products.filter((p) => data.getAll('products').includes(p.key));
  if (chosen.length === 0) return 'Choose at least one product';
  // A feature is sent only for a product chosen: one of another product is a 400.
  const features = chosen.flatMap((p) => data.getAll(`features:${p.key}`).map(String));

  const name = text(data, 'name');
  if (name.length > 255) return 'Contract name: at most 255 characters';

  const startText = text(data, 'start');
  const endText = text(data, 'end');
  const start = startText ? dateToUnix(startText) : Math.floor(Date.now() / 1000);
  if (start === undefined) return `Start date: "${startText}" is not a date`;
  if (!endText) return 'End date is required';
  const end = dateToUnix(endText, true);
  if (end === undefined) return `End date: "${endText}" is not a date`;
  if (end <= start) return 'End date must be after the start date';

  const emails: Record<string, string[]> = {};
  for (const [field, label] of RECIPIENT_FIELDS) {
    const { list, problem } = emailList(text(data, field), label);
    if (problem) return problem;
    if (list.length) emails[field] = list;
  }

  let quota: string | undefined;
  if (data.get('quotaEnabled')) {
    const metric = text(data, 'quotaMetric');
    const limitText = text(data, 'quotaLimit');
    const limit = Number(limitText);
    if (!metric) return 'Quota metric is required for a quota';
    if (!limitText || !Number.isFinite(limit) || limit <= 0) return 'Quota limit: a number above 0 is required for a quota';
    const thresholdsText = text(data, 'quotaThresholds');
    const alertThresholds = thresholdsText
      ? thresholdsText
          .split(/[\s,]+/)
          .filter(Boolean)
          .map(Number)
      : [];
    if (alertThresholds.some((t) => !Number.isInteger(t) || t < 1 || t > 100))
      return 'Alert thresholds: whole percentages from 1 to 100, separated by commas';
    quota = JSON.stringify({
      enabled: true,
      metric,
      limit,
      alertThresholds,
      disableLicenseOnLimitReached: Boolean(data.get('quotaDisable')),
    });
  }

  const restrictions = text(data, 'restrictions');
  if (restrictions) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(restrictions);
    } catch {
      return 'Restrictions: not valid JSON';
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      return 'Restrictions: a JSON object is required, e.g. {"maxNodes": 10}';
  }

  const file = data.get('document');
  const document = file instanceof File && file.size > 0 ? file : undefined;
  if (document && document.size > MAX_DOCUMENT_BYTES)
    return `Contract document: at most 3 MiB (this one is ${(document.size / 1048576).toFixed(1)} MiB)`;

  const body: CreateForm = {
    products: chosen.map((p) => p.key),
    ...(features.length ? { features } : {}),
    ...(name ? { name } : {}),
    start,
    end,
    ...(Object.keys(emails).length ? { emails: JSON.stringify(emails) } : {}),
    ...(quota ? { quota } : {}),
    ...(restrictions ? { restrictions } : {}),
  };
  for (const [flag] of FLAGS) body[flag] = Boolean(data.get(flag));
  return { owner: text(data, 'owner'), body, document };
}

/** The fields as multipart parts: a list as repeated fields (docs/contracts.md), the document as the file part. */
function toFormData(body: CreateForm, document: File | undefined): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) form.append(key, String(v));
  }
  if (document) form.append('document', document, document.name);
  return form;
}

export function CreateContract() {
  const [params] = useSearchParams();
  const catalog = useProducts();
  const suggestions = useOwnerSuggestions();
  const action = useAction();
  const creation = useContractChange(adminRoutes, (read: Exclude<ReturnType<typeof readForm>, string>) =>
    ok(
      api.POST('/contracts', {
        params: { query: read.owner ? { org: read.owner } : {} },
        body: read.body,
        bodySerializer: (body) => toFormData(body, read.document),
      }),
    ),
  );
  const [created, setCreated] = useState<Contract[]>([]);
  // The day the form opened: its default start and the earliest end.
  const [today] = useState(() => unixToDate(Date.now() / 1000));
  return (
    <>
      <p>
        <Link to={adminRoutes.base}>All contracts</Link>
      </p>
      <Section title="Create a contract">
        <Show loaded={catalog}>
          {(raw) => {
            const products = productsOf(raw);
            return (
              <Form
                label="Create a contract"
                submitLabel="Create contract"
                action={action}
                validate={(data) => {
                  const read = readForm(data, products);
                  return typeof read === 'string' ? read : undefined;
                }}
                submit={async (data) => {
                  const read = readForm(data, products);
                  if (typeof read === 'string') throw new Error(read);
                  const made = await creation.mutateAsync(read);
                  setCreated(made);
                  return `Created ${made.map((c) => `contract ${c.id} (${c.product})`).join(', ')} for ${made[0]?.orgOrUser ?? 'the owner'}`;
                }}
              >
                <SuggestField
                  label="Owner account"
                  name="owner"
                  defaultValue={params.get('owner') ?? ''}
                  suggestions={suggestions}
                  hint="An organization, or a user's login; empty: your own account"
                />
                <Field label="Contract name" name="name" hint="At most 255 characters" />
                <Field label="Start date" name="start" type="date" defaultValue={today} />
                <Field label="End date" name="end" type="date" required min={today} />
                {products.map((p) => (
                  <fieldset key={p.key}>
                    <legend>{p.title}</legend>
                    <Check name="products" value={p.key} label={`Contract for ${p.key}`} />
                    <span className="muted"> Features (none chosen: the product's defaults):</span>{' '}
                    {p.features.map((f) => (
                      <Check key={f} name={`features:${p.key}`} value={f} label={f} defaultChecked={p.defaults.includes(f)} />
                    ))}
                  </fieldset>
                ))}
                <fieldset>
                  <legend>Recipients (email addresses, separated by commas)</legend>
                  <div className="grid">
                    {RECIPIENT_FIELDS.map(([name, label]) => (
                      <Field key={name} label={label} name={name} type="text" />
                    ))}
                  </div>
                </fieldset>
                <fieldset>
                  <legend>Quota</legend>
                  <Check name="quotaEnabled" label="Limit usage with a quota" />
                  <div className="grid">
                    <Select
                      label="Quota metric"
                      name="quotaMetric"
                      options={[['', 'Choose a metric'], ...QUOTA_METRICS.map(([m, name]) => [m, name] as [string, string])]}
                    />
                    <Field label="Quota limit" name="quotaLimit" type="number" min={0} />
                    <Field label="Alert thresholds (%)" name="quotaThresholds" placeholder="50, 80, 100" />
                  </div>
                  <p className="muted">A month is 730 hours: a CPU core-month is 730 CPU core-hours of use.</p>
                  <Check name="quotaDisable" label="Stop issuing licenses when the quota is used up" />
                </fieldset>
                <fieldset>
                  <legend>Options</legend>
                  {FLAGS.map(([name, label]) => (
                    <Check key={name} name={name} label={label} />
                  ))}
                </fieldset>
                <TextArea label="Restrictions (JSON)" name="restrictions" hint="Optional: a JSON object the licenses carry" />
                <Field label="Contract document" name="document" type="file" hint="Optional, at most 3 MiB" />
              </Form>
            );
          }}
        </Show>
        {created.length > 0 && (
          <ul aria-label="Created contracts">
            {created.map((c) => (
              <li key={c.id}>
                <Link to={`${adminRoutes.base}/${c.id}`}>
                  Open contract {c.id}: {contractTitle(c)}
                </Link>
              </li>
            ))}
          </ul>
        )}
      </Section>
    </>
  );
}
