import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, loadConfig, type Logger } from '@platform/service-kit';
import { closeBackends, connectBackends, type Backends } from '../src/backends';
import { gatewayEnv } from '../src/config';
import { createGatewayHttp } from '../src/http';
import { ROUTES } from '../src/sections';

/** A gateway under test on a loopback port, with the whole route table. */
export interface TestGateway {
  /** e.g. http://127.0.0.1:41234 */
  base: string;
  backends: Backends;
  close(): void;
}

/** Starts the gateway's HTTP app with these settings (silent logs and a 2 s backend deadline unless given). */
export async function startTestGateway(
  env: Record<string, string>,
  log: Logger = createLogger('gateway-test', 'silent'),
): Promise<TestGateway> {
  const config = loadConfig(gatewayEnv, { LOG_LEVEL: 'silent', BACKEND_DEADLINE_MS: '2000', ...env });
  const { backends } = connectBackends(config);
  const server = http.createServer(createGatewayHttp({ routes: ROUTES, backends, config, log }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    backends,
    close: () => {
      server.closeAllConnections();
      server.close();
      closeBackends(backends);
    },
  };
}

/**
 * A gateway's answer as the route tests read it: the status and the JSON body (undefined when there is none);
 * `headers` is not enumerable, so `toEqual({ status, body })` holds.
 */
export interface ApiAnswer {
  status: number;
  body: any;
  headers: Headers;
}

/**
 * Calls `/api/v1{path}` of the gateway at `base` as `who` (a token, sent as `token <who>`; undefined: anonymous), with
 * `body` as JSON when given.
 */
export async function callApi(base: string, who: string | undefined, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { ...(who ? { authorization: `token ${who}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const answer = { status: res.status, body: text ? JSON.parse(text) : undefined } as ApiAnswer;
  return Object.defineProperty(answer, 'headers', { value: res.headers, enumerable: false });
}
