import { DomainError, UnavailableError, withRetries, type RetryPolicy } from '@platform/errors';

/** Where a dashboard API is and how to call it; `name` is how errors name it ("flavor A"). */
export interface DashboardApiOptions {
  name: string;
  url: string;
  token: string;
  timeoutMs: number;
  /** How an idempotent call is retried; by default 3 attempts, the retries after 100 and 400 ms. */
  retry?: RetryPolicy;
}

/** An answer of a dashboard API: its status and its parsed JSON body (undefined when empty or not JSON). */
export interface DashboardReply<T = any> {
  status: number;
  body: T;
}

// GET, PUT and DELETE may be sent again without doing anything twice; a POST is sent once.
const IDEMPOTENT = new Set(['GET', 'PUT', 'DELETE', 'HEAD']);
const RETRIED_STATUS = new Set([429, 502, 503, 504]);
// 100 then 400 ms, the same every time: one proxy's calls to its own dashboard, no fleet to spread out with jitter.
const DEFAULT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 100, factor: 4, jitter: 'none' };

/**
 * A small JSON client of one dashboard API: bearer token, a timeout per attempt, retries of idempotent calls on
 * network failures and 429/502/503/504. Answers 2xx and 4xx to the caller (who knows which 404 or 409 is
 * expected); a 5xx after the retries is a 502 and an unreachable API a 503, both naming the API but never the
 * token or a request body (which carries credentials).
 */
export class DashboardApi {
  private readonly root: string;
  private readonly retry: RetryPolicy;

  constructor(private readonly opts: DashboardApiOptions) {
    this.root = opts.url.replace(/\/+$/, '');
    this.retry = opts.retry ?? DEFAULT_RETRY;
  }

  async call<T = any>(method: string, path: string, body?: unknown): Promise<DashboardReply<T>> {
    const policy = IDEMPOTENT.has(method) ? this.retry : { ...this.retry, attempts: 1 };
    // Only the failures `attempt` makes are retried (the API unreachable or answering 5xx/429); anything else is ours.
    return withRetries(
      policy,
      (err) => err instanceof DomainError,
      () => this.attempt<T>(method, path, body),
    );
  }

  private async attempt<T>(method: string, path: string, body: unknown): Promise<DashboardReply<T>> {
    let res: Response;
    try {
      res = await fetch(`${this.root}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.opts.token}`,
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      const why = (err as Error).name === 'TimeoutError' ? `gave no answer within ${this.opts.timeoutMs} ms` : 'is unreachable';
      throw new UnavailableError(`${this.opts.name} (${this.host()}) ${why}: ${method} ${path.split('?')[0]}`);
    }
    const text = await res.text().catch(() => '');
    if (res.status >= 500 || RETRIED_STATUS.has(res.status)) {
      throw new DomainError('unavailable', `${this.opts.name} answered ${res.status} to ${method} ${path.split('?')[0]}`, {
        httpStatus: res.status === 503 || res.status === 429 ? 503 : 502,
      });
    }
    return { status: res.status, body: parseJson(text) };
  }

  /** A 4xx the caller did not expect: the dashboard refused what we sent; said as a 502 with its message. */
  refused(reply: DashboardReply, what: string): DomainError {
    const said = typeof reply.body?.message === 'string' ? `: ${reply.body.message.slice(0, 200)}` : '';
    return new DomainError('unavailable', `${this.opts.name} refused to ${what} (${reply.status}${said})`, { httpStatus: 502 });
  }

  private host(): string {
    return new URL(this.root).host;
  }
}

function parseJson(text: string): any {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
