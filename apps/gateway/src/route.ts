import type { Request } from 'express';
import type { BackendName, Backends } from './backends';
import type { GatewayConfig } from './config';
import type { Gate } from './gating';

/** What a route handler gets besides the request. */
export interface RouteContext {
  backends: Backends;
  requestId: string;
  config: GatewayConfig;
}

/** What a route handler answers; the edge turns it into the HTTP response. */
export interface RouteResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One row of the gateway's route table: path, who may call it, which backend answers, how. */
export interface Route {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Express path below /api/v1, e.g. "/orgs/:orgname". */
  path: string;
  summary: string;
  /** Who may call: anyone, or a caller with a valid token. */
  auth: 'public' | 'token';
  /** The backend app answering; when it is down only routes naming it answer 503. */
  service: BackendName;
  /** Deployment gate (spec section 1); absent means every deployment. */
  gate?: Gate;
  handle(req: Request, ctx: RouteContext): Promise<RouteResult>;
}
