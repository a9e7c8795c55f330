import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { JWT } from 'google-auth-library';
import { withRetries, type RetryPolicy } from '@platform/errors';
import { chunks } from '@platform/service-kit';
import type { SubscriptionRow } from '../subscriptions/subscriptions-store';
import { describe, type MeteringProvider, type Readiness, type SettingWarning, type Usage, type UsageOutcome } from './provider';

export interface ProviderCMeteringConfig {
  /** Service Control's root, `https://servicecontrol.googleapis.com` in production. */
  endpoint: string;
  /** The managed service name usage is reported for (`<name>.endpoints.<project>.cloud.goog` or the listing's). */
  serviceName?: string;
  /** Path of a service-account key file (JSON with client_email, private_key, token_uri). */
  keyFile?: string;
  /** The key's JSON itself; wins over `keyFile`. */
  key?: string;
  /** The consumer a readiness check without a subscription names (`project:<id>`). */
  defaultConsumerId?: string;
  retry: RetryPolicy;
  timeoutMs: number;
}

/**
 * Operations per `services.report`. Service Control takes any number under 1 MB per request; a record here is
 * under 2 KB (dimension and IDs are bounded), so 100 keep each request far below the limit.
 */
export const REPORT_BATCH_LIMIT = 100;
const SCOPE = 'https://www.googleapis.com/auth/servicecontrol';
/** Where google-auth-library always sends the grant, whatever the key's token_uri says. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  token_uri: string;
}

/**
 * The third provider's metering through Google Service Control's documented REST API (v1): usage with
 * `services.report` (one operation per record, metric `<service>/<dimension>`), readiness with
 * `services.check`. Authentication is a service account's OAuth 2.0 JWT-bearer grant (RFC 7523) at the key's
 * token_uri, made and cached by google-auth-library (`tokenClient`). Service Control calls that fail on the
 * network, with 429 or with 5xx are retried with backoff; errors Service Control names per operation are that
 * record's failure.
 */
export function providerCMetering(config: ProviderCMeteringConfig): MeteringProvider {
  let tokens: JWT | undefined;
  let keyError = '';
  if (config.key || config.keyFile) {
    // Never the key's text in a message: only which setting and what is wrong with it.
    const setting = config.key ? 'PROVIDERC_SERVICE_ACCOUNT_KEY' : `PROVIDERC_SERVICE_ACCOUNT_KEY_FILE ${config.keyFile}`;
    try {
      tokens = tokenClient(parseKey(config.key || readFileSync(config.keyFile!, 'utf8')), config.timeoutMs);
    } catch (err) {
      keyError = `${setting}: ${err instanceof SyntaxError ? 'not valid JSON' : describe(err)}`;
    }
  }
  const accessToken = async (): Promise<string> => {
    if (!tokens) throw new Error(keyError || 'PROVIDERC_SERVICE_ACCOUNT_KEY (or _FILE) is not set');
    const { token } = await tokens.getAccessToken();
    if (!token) throw new Error('the token endpoint answered no access_token');
    return token;
  };

  /** One HTTP call, retried on network failures, 429 and 5xx; another non-2xx is an error naming the status. */
  const call = (url: string, init: RequestInit) =>
    withRetries(
      config.retry,
      (err) => err instanceof RetryableError,
      async () => {
        let res: Response;
        try {
          res = await fetch(url, { ...init, signal: AbortSignal.timeout(config.timeoutMs) });
        } catch (err) {
          throw new RetryableError(`${new URL(url).host} unreachable: ${describe(err)}`);
        }
        if (res.status === 429 || res.status >= 500) throw new RetryableError(`${new URL(url).host} answered ${res.status}`);
        if (!res.ok) throw new Error(`${new URL(url).host} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
        return res;
      },
    );

  const serviceCall = async (verb: 'check' | 'report', body: unknown) => {
    const url = `${config.endpoint.replace(/\/+$/, '')}/v1/services/${encodeURIComponent(config.serviceName ?? '')}:${verb}`;
    const res = await call(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await accessToken()}` },
      body: JSON.stringify(body),
    });
    return res.json() as Promise<Record<string, unknown>>;
  };

  const consumerOf = (subscription?: SubscriptionRow, given?: string) => {
    const kept = subscription?.billing_details.consumerId;
    return given || (typeof kept === 'string' ? kept : '') || config.defaultConsumerId || '';
  };

  return {
    async report(subscription: SubscriptionRow, usage: Usage[], consumerId?: string): Promise<UsageOutcome[]> {
      const consumer = consumerOf(subscription, consumerId);
      const outcomes: UsageOutcome[] = [];
      for (const batch of chunks(usage, REPORT_BATCH_LIMIT)) {
        const operations = batch.map((u) => ({
          // A stable ID per record: Service Control deduplicates a retried report by operation ID.
          operationId: randomUUID(),
          operationName: `${subscription.marketplace}/${subscription.subscription_id}/usage`,
          consumerId: consumer,
          startTime: u.timestamp.toISOString(),
          endTime: u.timestamp.toISOString(),
          labels: { 'cloudmarketplace.googleapis.com/subscription': subscription.subscription_id },
          metricValueSets: [
            {
              metricName: `${config.serviceName}/${u.dimension}`,
              metricValues: [{ int64Value: String(u.quantity), startTime: u.timestamp.toISOString(), endTime: u.timestamp.toISOString() }],
            },
          ],
        }));
        try {
          const answer = await serviceCall('report', { operations });
          const errors = new Map<string, string>();
          for (const e of (answer.reportErrors ?? []) as { operationId?: string; status?: { message?: string; code?: number } }[]) {
            errors.set(e.operationId ?? '', e.status?.message ?? `code ${e.status?.code ?? '?'}`);
          }
          batch.forEach((u, i) => {
            const id = operations[i].operationId;
            const error = errors.get(id);
            outcomes.push({ ...u, status: error === undefined ? 'Success' : 'Failed', recordId: id, message: error ?? '' });
          });
        } catch (err) {
          for (const u of batch) outcomes.push({ ...u, status: 'Failed', recordId: '', message: describe(err) });
        }
      }
      return outcomes;
    },

    async readiness(subscription?: SubscriptionRow): Promise<Readiness> {
      if (!config.serviceName) return { ready: false, message: 'PROVIDERC_SERVICE_NAME is not set' };
      const consumer = consumerOf(subscription);
      if (!consumer)
        return { ready: false, message: 'no consumer to check: the subscription has none and PROVIDERC_CONSUMER_ID is not set' };
      try {
        const answer = await serviceCall('check', {
          operation: {
            operationId: randomUUID(),
            operationName: 'metering readiness',
            consumerId: consumer,
            startTime: new Date().toISOString(),
          },
        });
        const errors = (answer.checkErrors ?? []) as { code?: string; detail?: string }[];
        if (errors.length > 0) {
          return {
            ready: false,
            message: `services.check: ${errors.map((e) => `${e.code}${e.detail ? ` (${e.detail})` : ''}`).join(', ')}`,
          };
        }
        return { ready: true, message: `services.check passed for ${consumer}` };
      } catch (err) {
        return { ready: false, message: `services.check failed: ${describe(err)}` };
      }
    },

    warnings(): SettingWarning[] {
      const w: SettingWarning[] = [];
      if (!config.serviceName) w.push({ Level: 'Error', Msg: 'PROVIDERC_SERVICE_NAME is not set: usage cannot be reported' });
      if (!config.key && !config.keyFile)
        w.push({ Level: 'Error', Msg: 'PROVIDERC_SERVICE_ACCOUNT_KEY (or _FILE) is not set: Service Control cannot be called' });
      else if (keyError) w.push({ Level: 'Error', Msg: keyError });
      if (!config.defaultConsumerId)
        w.push({
          Level: 'Warning',
          Msg: 'PROVIDERC_CONSUMER_ID is not set: readiness can be checked only for a subscription with a consumer',
        });
      if (!config.endpoint.startsWith('https://'))
        w.push({ Level: 'Warning', Msg: `PROVIDERC_SERVICE_CONTROL_ENDPOINT ${config.endpoint} is not HTTPS` });
      return w;
    },
  };
}

class RetryableError extends Error {}

function parseKey(text: string): ServiceAccountKey {
  const k = JSON.parse(text) as Partial<ServiceAccountKey>;
  if (!k.client_email || !k.private_key || !k.token_uri)
    throw new Error('must be a service-account key with client_email, private_key and token_uri');
  return k as ServiceAccountKey;
}

/**
 * The service account's token source: google-auth-library signs the grant, asks the token endpoint (retrying
 * network failures, 429 and 5xx itself) and keeps the token until shortly before it expires. The library
 * always asks Google's endpoint, so a key naming another one (a private endpoint, a test's double) has its
 * grant sent there, with that endpoint as the grant's audience as before; Google's own keys name Google's.
 */
function tokenClient(key: ServiceAccountKey, timeoutMs: number): JWT {
  const client = new JWT({
    email: key.client_email,
    key: key.private_key,
    scopes: [SCOPE],
    additionalClaims: { aud: key.token_uri },
    // Node's own fetch: gaxios would otherwise load node-fetch.
    transporterOptions: { timeout: timeoutMs, fetchImplementation: fetch },
  });
  if (key.token_uri !== GOOGLE_TOKEN_URL) {
    client.transporter.interceptors.request.add({
      resolved: async (request) => {
        if (String(request.url) === GOOGLE_TOKEN_URL) request.url = new URL(key.token_uri);
        return request;
      },
    });
  }
  return client;
}
