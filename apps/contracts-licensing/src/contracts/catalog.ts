import type { billingDashboardV1, QuotaMetric } from '@platform/proto';

/**
 * The product catalog (`GET /contracts/available_products`): the products a contract can cover, kept as data
 * here (docs/contracts.md). Licenses carry a product's `productLine` as Country and its `tier` as Province
 * (docs/licensing.md). Community editions need no contract and are not listed.
 */
export interface Product {
  /** Display name. */
  title: string;
  /** The product line licenses name (certificate Country). */
  productLine: string;
  /** The tier licenses name (certificate Province). */
  tier: string;
  /** The plan licenses name (certificate OrganizationalUnit). */
  plan: string;
  /** Every feature the product can license. */
  features: string[];
  /** What a contract gets when it names none of the product's features. */
  defaultFeatures: string[];
}

export const PRODUCTS: Record<string, Product> = {
  productdb: {
    title: 'Product DB (managed databases)',
    productLine: 'productdb',
    tier: 'enterprise',
    plan: 'productdb-enterprise',
    features: ['postgres', 'mysql', 'mongodb', 'redis', 'elasticsearch', 'kafka', 'backup-integration', 'monitoring', 'autoscaling'],
    defaultFeatures: ['postgres', 'mysql', 'mongodb', 'redis', 'monitoring'],
  },
  productbackup: {
    title: 'Product Backup',
    productLine: 'productbackup',
    tier: 'enterprise',
    plan: 'productbackup-enterprise',
    features: ['backup', 'restore', 'volume-snapshot', 'cross-cluster-restore', 'encryption'],
    defaultFeatures: ['backup', 'restore', 'volume-snapshot'],
  },
  productvault: {
    title: 'Product Vault (secrets management)',
    productLine: 'productvault',
    tier: 'enterprise',
    plan: 'productvault-enterprise',
    features: ['secret-engines', 'database-credentials', 'pki', 'auto-unseal'],
    defaultFeatures: ['secret-engines', 'database-credentials'],
  },
  productingress: {
    title: 'Product Ingress (gateway)',
    productLine: 'productingress',
    tier: 'enterprise',
    plan: 'productingress-enterprise',
    features: ['ingress', 'gateway-api', 'tls-termination', 'rate-limiting', 'waf'],
    defaultFeatures: ['ingress', 'gateway-api', 'tls-termination'],
  },
};

/**
 * Hours in a billing month: a year's 8,760 hours over twelve months, the convention cloud billing uses, so a
 * core-month is the same amount of use whichever calendar month it falls in.
 */
export const HOURS_PER_MONTH = 730;

/** A product's use over a period as billing-dashboard sums the usage samples member clusters report (GetUsage). */
export type UsageHours = billingDashboardV1.Usage;

/**
 * How much of each quota metric a use is (docs/contracts.md): the product's month-based metrics are the hours
 * over HOURS_PER_MONTH; the hour-based ones are the hours themselves.
 */
const METRIC_AMOUNT: Record<QuotaMetric, (u: UsageHours) => number> = {
  cpu_core_month: (u) => u.cpuCoreHours / HOURS_PER_MONTH,
  memory_gib_month: (u) => u.memoryGibHours / HOURS_PER_MONTH,
  'cpu-core-hours': (u) => u.cpuCoreHours,
  'memory-gib-hours': (u) => u.memoryGibHours,
  'storage-gib-hours': (u) => u.storageGibHours,
  'object-hours': (u) => u.objectHours,
};

/** The use in the unit of `metric`. */
export function quotaAmount(metric: QuotaMetric, usage: UsageHours): number {
  return METRIC_AMOUNT[metric](usage);
}

/** The catalog as `available_products` answers it: alias → plan info. */
export function catalogJson(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(PRODUCTS).map(([alias, p]) => [
      alias,
      { title: p.title, productLine: p.productLine, tier: p.tier, plan: p.plan, features: p.features, defaultFeatures: p.defaultFeatures },
    ]),
  );
}

/**
 * The features a contract for `product` gets from the features a request names: those the product has;
 * the product's defaults when it names none of them.
 */
export function featuresFor(product: string, requested: string[]): string[] {
  const p = PRODUCTS[product];
  const own = requested.filter((f) => p.features.includes(f));
  return own.length > 0 ? [...new Set(own)] : [...p.defaultFeatures];
}
