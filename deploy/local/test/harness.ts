import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, testNatsUrl } from '@platform/testing';
import { startPlatform, type LocalPlatform, type StartOptions } from '../src/platform';
import { platformTemplate } from './platform-template';

/** An HTTP answer, body parsed when there is one; `headers` is not enumerable, so `toEqual({ status, body })` holds. */
export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

/** A multipart form of text fields (a repeated field for each value of a list), as the contract rows take. */
export function formOf(fields: Record<string, string | string[]>): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  return form;
}

/** `Authorization` value for HTTP Basic credentials. */
export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The whole platform on real Postgres (a fresh database) and NATS, with a signed-in site admin `root`. */
export interface TestPlatform {
  platform: LocalPlatform;
  /** Personal access tokens by login. */
  tokens: Record<string, string>;
  /** Account ids by login. */
  ids: Record<string, number>;
  /** Calls /api/v1 as `who` (a login with a token, or undefined: anonymous); redirects are not followed. */
  api(who: string | undefined, method: string, path: string, json?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** Like `api`, with a body sent as given (a malformed JSON string, a multipart FormData) and its content type in `headers`. */
  send(who: string | undefined, method: string, path: string, body?: RequestInit['body'], headers?: RequestInit['headers']): Promise<Reply>;
  /** Creates user `login` (password `<login>-password`) through the admin API, with a token. */
  signUp(login: string): Promise<void>;
  /** Creates a personal access token for `login` with HTTP Basic auth. */
  tokenFor(login: string, password: string, name?: string): Promise<string>;
  /** host:port of an app's gRPC server, for fixtures the API cannot make (e.g. claims, bus accounts). */
  grpcAddress(app: string): string;
  stop(): Promise<void>;
}

export const ROOT_PASSWORD = 'root-password';

/**
 * Boots the platform for one test file; `env` adds or overrides settings. `options.apps` starts only those apps and
 * the gateway (an integration test of a flow across them); the others answer as stopped apps do.
 */
export async function bootTestPlatform(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestPlatform> {
  // A copy of a database every app's migrations were applied to, made once: the boot skips running them.
  const db = await createTestDatabase({ template: await platformTemplate() });
  const platform = await startPlatform(
    {
      DATABASE_URL: db.url,
      NATS_URL: await testNatsUrl(),
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
      // Every answer of the suite is checked against the API document's schema for it.
      VALIDATE_RESPONSES: 'true',
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_PASSWORD: ROOT_PASSWORD,
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      // Key files and objects of this test file only, never in the working tree.
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'platform-e2e-')),
      ...env,
    },
    undefined,
    options,
  ).catch(async (err) => {
    await db.drop();
    throw err;
  });
  const tokens: Record<string, string> = {};
  const ids: Record<string, number> = {};

  const send: TestPlatform['send'] = async (who, method, path, body, extra = {}) => {
    const headers = new Headers(extra);
    if (who) headers.set('authorization', `token ${tokens[who]}`);
    const res = await fetch(`${platform.url}api/v1${path}`, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const reply = { status: res.status, body: text && type.includes('json') ? JSON.parse(text) : text || undefined } as Reply;
    return Object.defineProperty(reply, 'headers', { value: res.headers });
  };
  const api: TestPlatform['api'] = (who, method, path, json, extra = {}) => {
    const headers = new Headers(extra);
    if (json !== undefined) headers.set('content-type', 'application/json');
    return send(who, method, path, json !== undefined ? JSON.stringify(json) : undefined, headers);
  };

  const tokenFor: TestPlatform['tokenFor'] = async (login, password, name = 'cli') => {
    const res = await api(undefined, 'POST', `/users/${login}/tokens`, { name }, { authorization: basic(login, password) });
    if (res.status !== 201) throw new Error(`token for ${login}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.sha1;
  };

  const signUp: TestPlatform['signUp'] = async (login) => {
    const created = await api('root', 'POST', '/admin/users', {
      username: login,
      email: `${login}@example.com`,
      password: `${login}-password`,
    });
    if (created.status !== 201) throw new Error(`sign-up of ${login}: ${created.status} ${JSON.stringify(created.body)}`);
    ids[login] = created.body.id;
    tokens[login] = await tokenFor(login, `${login}-password`);
  };

  tokens.root = await tokenFor('root', ROOT_PASSWORD, 'admin');
  ids.root = (await api('root', 'GET', '/user')).body.id;
  return {
    platform,
    tokens,
    ids,
    api,
    send,
    signUp,
    tokenFor,
    grpcAddress: (app) => `127.0.0.1:${platform.apps.get(app)!.grpcPort}`,
    async stop() {
      await platform.stop();
      await db.drop();
    },
  };
}
