/** The platform's REST API, as the simulator and the demo seed call it (a person would call the same routes). */

/** An answer that was not what the call needed. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(
      `${what}: HTTP ${status}${body && typeof body === 'object' && 'message' in body ? ` ${(body as { message: string }).message}` : ''}`,
    );
    this.name = 'ApiError';
  }
}

export interface ApiCredentials {
  /** Base URL of the platform, e.g. http://localhost:8080 */
  url: string;
  username: string;
  password: string;
}

export interface Answer {
  status: number;
  body: any;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A client of /api/v1 holding a personal access token made with HTTP Basic auth (`POST /users/{username}/tokens`). */
export class PlatformApi {
  private constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly creds: ApiCredentials,
    private readonly tokenId: number,
    /** The caller's account id. */
    readonly userId: number,
  ) {}

  /** Signs in: creates a token named `<purpose>-<time>` (deleted again by `close`). */
  static async signIn(creds: ApiCredentials, purpose = 'simulator'): Promise<PlatformApi> {
    const base = `${creds.url.replace(/\/+$/, '')}/api/v1`;
    const name = `${purpose}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    let res: Response;
    try {
      res = await fetch(`${base}/users/${encodeURIComponent(creds.username)}/tokens`, {
        method: 'POST',
        headers: { authorization: basic(creds.username, creds.password), 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
    } catch (err) {
      throw new Error(`cannot reach the platform at ${creds.url}: ${(err as Error).cause ?? (err as Error).message}`);
    }
    const body = (await res.json().catch(() => undefined)) as any;
    if (res.status !== 201)
      throw new ApiError(
        res.status,
        body,
        `signing in as ${creds.username} (POST /users/${creds.username}/tokens)${res.status === 401 ? ': wrong username or password' : ''}`,
      );
    const me = await fetch(`${base}/user`, { headers: { authorization: `token ${body.sha1}` } });
    if (me.status !== 200) throw new ApiError(me.status, await me.json().catch(() => undefined), 'GET /user');
    return new PlatformApi(base, body.sha1, creds, body.id, ((await me.json()) as any).id);
  }

  /** Calls a route with the token (a JSON body, or a multipart form); answers whatever status comes back. */
  async call(method: string, path: string, json?: unknown): Promise<Answer> {
    const form = json instanceof FormData;
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { authorization: `token ${this.token}`, ...(json === undefined || form ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : form ? json : JSON.stringify(json),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body };
  }

  /** Like `call`, throwing ApiError unless the status is one of `ok`. */
  async expect(method: string, path: string, ok: number[], json?: unknown): Promise<Answer> {
    const answer = await this.call(method, path, json);
    if (!ok.includes(answer.status)) throw new ApiError(answer.status, answer.body, `${method} ${path}`);
    return answer;
  }

  /** Deletes the token made by `signIn` (best effort). */
  async close(): Promise<void> {
    await fetch(`${this.base}/users/${encodeURIComponent(this.creds.username)}/tokens/${this.tokenId}`, {
      method: 'DELETE',
      headers: { authorization: basic(this.creds.username, this.creds.password) },
    }).catch(() => undefined);
  }
}
