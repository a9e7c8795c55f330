/**
 * Names every app shares, defined once: the UUID form of cluster UIDs, claim and message ids, and the keys of the
 * licensed products. `libs/testing/src/shared-names.test.ts fails when another file spells one of them out again.
 */

/** The text of a UUID in canonical lower-case form, for composing larger patterns. */
export const UUID_TEXT = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

const LOWER_UUID = new RegExp(`^${UUID_TEXT}$`);
/** A whole UUID in either case, spelled without flags so it reads the same as a JSON Schema `pattern`. */
export const UUID_ANY_CASE_PATTERN = new RegExp(`^${UUID_TEXT.replaceAll('a-f', 'a-fA-F')}$`);

/** A UUID in lower case: the only form cluster UIDs and message ids take on the wire (Kubernetes writes them so). */
export function isUuid(s: string): boolean {
  return LOWER_UUID.test(s);
}

/** A UUID in either case, as a client may send one; compare it lower-cased. */
export function isUuidAnyCase(s: string): boolean {
  return UUID_ANY_CASE_PATTERN.test(s);
}

/**
 * The licensed products whose usage is reported, viewed and billed, by key. The contract catalog
 * (apps/contracts-licensing/src/contracts/catalog.ts) describes each; the usage views, the billing SQL and the
 * simulator all take their list from here.
 */
export const PRODUCT_KEYS = ['productdb', 'productbackup', 'productvault', 'productingress'] as const;
export type ProductKey = (typeof PRODUCT_KEYS)[number];

export function isProductKey(s: string): s is ProductKey {
  return (PRODUCT_KEYS as readonly string[]).includes(s);
}

/**
 * The monthly usage-report views, by path segment, with the products that have them: the gateway's routes and
 * billing's SQL are made from this one table.
 */
export const USAGE_VIEWS = {
  'objects-usage-view': ['productdb'],
  'clusters-usage-view': PRODUCT_KEYS,
  'namespaces-usage-view': ['productdb'],
  'gks-usage-view': ['productdb'],
  'contracts-usage-view': PRODUCT_KEYS,
  'object-quota-history-summaries-view': ['productdb'],
  'objects-cluster-mode-usage-view': ['productdb'],
} as const satisfies Record<string, readonly ProductKey[]>;
export type UsageViewName = keyof typeof USAGE_VIEWS;
