import { z } from 'zod';
import { InputError } from '@platform/errors';
import { type contractsV1, isQuotaMetric, isUuid, QUOTA_METRICS } from '@platform/proto';
import { TEXT_LIMITS } from '@platform/service-kit';
import { PRODUCTS } from './catalog';

/** The recipient lists of a contract, in the order of the spec's Contract. */
export const EMAIL_LISTS = [
  'contactPerson',
  'signingAuthority',
  'licenseUsers',
  'financeTeam',
  'usageAlertClient',
  'usageAlertAdmin',
] as const satisfies readonly (keyof contractsV1.ContractEmails)[];

const email = z.email();

/** 400 naming the first address that is not an email, and the list it is in. */
export function checkEmails(emails: Partial<contractsV1.ContractEmails>): void {
  for (const list of EMAIL_LISTS) checkRecipients(list, emails[list] ?? []);
}

/** 400 for a contract name over TEXT_LIMITS.contractName or holding a NUL (which Postgres text cannot store). */
export function checkName(name: string | undefined): void {
  if (name === undefined) return;
  if (name.length > TEXT_LIMITS.contractName || name.includes('\u0000'))
    throw new InputError(`name: at most ${TEXT_LIMITS.contractName} characters, without NUL`, [
      { field: 'name', description: `at most ${TEXT_LIMITS.contractName} characters, without NUL` },
    ]);
}

/** 400 for a list holding something that is not an email address. */
export function checkRecipients(list: string, addresses: string[]): void {
  for (const address of addresses) {
    if (!email.safeParse(address).success)
      throw new InputError(`emails.${list}: ${JSON.stringify(address.slice(0, 100))} is not an email address`, [
        { field: `emails.${list}`, description: 'not an email address' },
      ]);
  }
}

/** 400 for a quota with a negative limit, an unknown metric (when enabled or named) or a threshold outside 1..100. */
export function checkQuota(quota: contractsV1.Quota): void {
  const bad = (field: string, description: string) =>
    new InputError(`quota.${field}: ${description}`, [{ field: `quota.${field}`, description }]);
  if (!Number.isFinite(quota.limit) || quota.limit < 0) throw bad('limit', 'must be zero or more');
  if ((quota.enabled || quota.metric) && !isQuotaMetric(quota.metric)) throw bad('metric', `must be one of ${QUOTA_METRICS.join(', ')}`);
  for (const t of quota.alertThresholds)
    if (!Number.isInteger(t) || t < 1 || t > 100) throw bad('alertThresholds', 'each threshold is a percentage from 1 to 100');
}

/** 400 for an empty products list or a product the catalog does not have. */
export function checkProducts(products: string[]): void {
  if (products.length === 0)
    throw new InputError('products: at least one product is required', [{ field: 'products', description: 'empty' }]);
  for (const p of products)
    if (!Object.hasOwn(PRODUCTS, p))
      throw new InputError(`products: ${JSON.stringify(p.slice(0, 64))} is not a supported product (GET /contracts/available_products)`, [
        { field: 'products', description: 'unsupported product' },
      ]);
}

/** 400 for features none of the products has. */
export function checkFeatures(products: string[], features: string[]): void {
  for (const f of features)
    if (!products.some((p) => PRODUCTS[p].features.includes(f)))
      throw new InputError(`features: ${JSON.stringify(f.slice(0, 64))} is not a feature of ${products.join(', ')}`, [
        { field: 'features', description: 'unknown feature' },
      ]);
}

/** 400 for restrictions that are not a JSON object (empty means none). */
export function checkRestrictions(restrictions: string): void {
  if (restrictions === '') return;
  let value: unknown;
  try {
    value = JSON.parse(restrictions);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InputError('restrictions: must be a JSON object', [{ field: 'restrictions', description: 'not a JSON object' }]);
}

/** 400 when the contract would end before it starts. */
export function checkPeriod(startUnix: number, endUnix: number): void {
  if (endUnix <= startUnix) throw new InputError('end: must be after start', [{ field: 'end', description: 'not after start' }]);
}


/** The cluster UUID lower-cased; 400 when it is not a UUID. */
export function clusterUid(value: string, field = 'cluster'): string {
  const uid = value.trim().toLowerCase();
  if (!isUuid(uid))
    throw new InputError(`${field}: ${JSON.stringify(value.slice(0, 64))} is not a UUID`, [{ field, description: 'not a UUID' }]);
  return uid;
}
