import { z } from 'zod';
import { serviceEnv, type ConfigOf } from '@platform/service-kit';

// An empty variable (a chart value left blank) counts as unset: the flavor is then "not configured".
const blankIsUnset = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const apiUrl = z.preprocess(blankIsUnset, z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional());
const token = z.preprocess(blankIsUnset, z.string().optional());

/**
 * metricsproxy settings (docs/metrics-proxy.md): the common ones and the two dashboard APIs the cluster
 * backends are registered with. A flavor whose URL or token is unset is "not configured": its routes answer
 * 503 naming the missing setting, and the service warns at start.
 */
export const metricsproxyEnv = {
  ...serviceEnv,
  /** Root of the Grafana-compatible HTTP API (flavor A), e.g. https://grafana.example.com. */
  FLAVORA_URL: apiUrl,
  /** A service-account token of flavor A (sent as `Authorization: Bearer`), with folder and datasource rights. */
  FLAVORA_TOKEN: token,
  /** Root of the Perses-compatible HTTP API (flavor B), e.g. https://perses.example.com. */
  FLAVORB_URL: apiUrl,
  /** A token of flavor B (sent as `Authorization: Bearer`) that may create projects, secrets and datasources. */
  FLAVORB_TOKEN: token,
  /** How long one call to a dashboard API may take, in milliseconds, before it is abandoned (and maybe retried). */
  FLAVOR_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
};
export type MetricsproxyConfig = ConfigOf<typeof metricsproxyEnv>;
