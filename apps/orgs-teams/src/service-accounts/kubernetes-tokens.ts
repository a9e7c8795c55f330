import { cacheMetrics, sizeOf } from '@platform/telemetry';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import { LRUCache } from 'lru-cache';
import type { Database } from '@platform/db';
import { UnavailableError } from '@platform/errors';
import { jwtPart, type CallOptions, type Logger } from '@platform/service-kit';
import type { ForeignTokens } from '../identity/identity';

/** Where the Kubernetes API is and how orgs-teams authenticates to it (in a pod: its own ServiceAccount token). */
export interface KubernetesApi {
  /** Base URL, e.g. `https://10.96.0.1:443`. */
  url: string;
  /** orgs-teams' own token for the API, read at each review (the kubelet rotates it). */
  tokenFile: string;
  /** CA bundle the API's certificate is checked against (https only). */
  caFile: string;
}

/** A Kubernetes ServiceAccount. */
export interface KubernetesSubject {
  namespace: string;
  name: string;
}

/** A JWT: three base64url parts (Kubernetes ServiceAccount tokens are). */
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** What TokenReview names a ServiceAccount. */
const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;
/** A token the API server vouched for is believed this long at most without asking again (or until it expires). */
const VOUCHED_MS = 60_000;
/** Longest wait for one review, unless the call's own deadline is nearer. */
const REVIEW_TIMEOUT_MS = 5_000;

/** The fields of a TokenReview's answer read here. */
interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string };
  audiences?: string[];
  error?: string;
}

/** Milliseconds until the token's `exp` claim, Infinity when it states none. */
function expiresInMs(token: string): number {
  const exp = jwtPart(token, 1)?.exp;
  return typeof exp === 'number' ? exp * 1000 - Date.now() : Infinity;
}

/**
 * Asks the Kubernetes API who a token is (TokenReview, `POST /apis/authentication.k8s.io/v1/tokenreviews` with our
 * audience), and remembers the ServiceAccounts it vouched for briefly: VOUCHED_MS at most, never past the token's
 * own expiry. Refusals are not remembered. Needs `create` on `tokenreviews` (ClusterRole `system:auth-delegator`).
 */
export class TokenReviewer {
  private readonly vouched = new LRUCache<string, KubernetesSubject>({ max: 10_000, ttl: VOUCHED_MS });
  private readonly metrics = cacheMetrics(sizeOf('orgs-teams.vouched-kubernetes-tokens', this.vouched));

  constructor(
    private readonly api: KubernetesApi,
    private readonly audience: string,
    private readonly log: Logger,
  ) {}

  /** The ServiceAccount the token authenticates for our audience; undefined when the API server vouches for none. */
  async subjectOf(token: string, call?: CallOptions): Promise<KubernetesSubject | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const known = this.vouched.get(key);
    (known ? this.metrics.hit : this.metrics.miss).inc();
    if (known) return known;
    const status = await this.review(token, call);
    // An API server that does not say the token is for our audience may not check audiences at all.
    if (!status.authenticated || !status.audiences?.includes(this.audience)) return undefined;
    const m = SERVICE_ACCOUNT_USER.exec(status.user?.username ?? '');
    if (!m) return undefined;
    const subject = { namespace: m[1], name: m[2] };
    const ttl = Math.min(VOUCHED_MS, expiresInMs(token));
    if (ttl > 0) this.vouched.set(key, subject, { ttl });
    return subject;
  }

  private async review(token: string, call?: CallOptions): Promise<TokenReviewStatus> {
    const unavailable = (cause: unknown) => {
      this.log.warn({ err: cause, url: this.api.url }, 'Kubernetes TokenReview failed');
      return new UnavailableError('the Kubernetes API could not review the token');
    };
    let bearer: string;
    let ca: Buffer | undefined;
    try {
      bearer = (await fs.readFile(this.api.tokenFile, 'utf8')).trim();
      ca = this.api.url.startsWith('https:') ? await fs.readFile(this.api.caFile) : undefined;
    } catch (err) {
      throw unavailable(err);
    }
    const body = JSON.stringify({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, audiences: [this.audience] },
    });
    const url = new URL('apis/authentication.k8s.io/v1/tokenreviews', this.api.url.endsWith('/') ? this.api.url : `${this.api.url}/`);
    const timeout = Math.max(1, Math.min(REVIEW_TIMEOUT_MS, call?.deadline ? call.deadline.getTime() - Date.now() : REVIEW_TIMEOUT_MS));
    const signal = call?.signal ? AbortSignal.any([call.signal, AbortSignal.timeout(timeout)]) : AbortSignal.timeout(timeout);
    let answer: { status: number; text: string };
    try {
      answer = await post(url, body, { authorization: `Bearer ${bearer}`, ca, signal });
    } catch (err) {
      throw unavailable(err);
    }
    if (answer.status !== 200 && answer.status !== 201) throw unavailable(new Error(`HTTP ${answer.status}: ${answer.text.slice(0, 200)}`));
    try {
      return ((JSON.parse(answer.text) as { status?: TokenReviewStatus }).status ?? {}) as TokenReviewStatus;
    } catch (err) {
      throw unavailable(err);
    }
  }
}

/** One JSON POST over http or https, its answer as text. */
function post(
  url: URL,
  body: string,
  opts: { authorization: string; ca?: Buffer; signal: AbortSignal },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: opts.authorization },
        ca: opts.ca,
        signal: opts.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * Kubernetes ServiceAccount tokens as credentials of service accounts: a JWT the API server vouches for stands for
 * the service account bound to its ServiceAccount (`service_account_subjects`), looked up at every authentication,
 * so unbinding a subject or deleting the account takes effect at once.
 */
export class KubernetesTokens implements ForeignTokens {
  constructor(
    private readonly db: Database,
    private readonly reviewer: TokenReviewer,
  ) {}

  recognizes(token: string): boolean {
    return JWT.test(token);
  }

  async accountOf(token: string, call?: CallOptions): Promise<number | undefined> {
    const subject = await this.reviewer.subjectOf(token, call);
    if (!subject) return undefined;
    const row = await this.db.table('service_account_subjects').where(subject).first('account_id');
    return row ? Number(row.account_id) : undefined;
  }
}
