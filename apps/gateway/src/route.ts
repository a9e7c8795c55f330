import type { Request } from 'express';
import type { orgsTeamsV1 } from '@platform/proto';
import type { BackendName, Backends } from './backends';
import type { GatewayConfig } from './config';
import type { Gate } from './gating';

/** What a route handler gets besides the request. */
export interface RouteContext {
  backends: Backends;
  requestId: string;
  config: GatewayConfig;
  /** The authenticated caller; always set on `token` and `basic` routes. */
  caller?: orgsTeamsV1.User;
  /** The organization named by `?org=`, resolved once (spec section 5.2). */
  org?: { id: number; name: string };
}

/** What a route handler answers; the edge turns it into the HTTP response. */
export interface RouteResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Where a route's permission is checked: the site, the `org` context, or an id taken from the request. */
export type CheckTarget = 'site' | 'org' | ((req: Request, ctx: RouteContext) => number | Promise<number>);

/** One row of the gateway's route table: path, who may call it, which backend answers, how. */
export interface Route {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Express path below /api/v1, e.g. "/orgs/:orgname". */
  path: string;
  summary: string;
  /**
   * Who may call: anyone (a token, when sent, must still be valid), a caller with a token (header
   * `Authorization: token <t>`, or `?token=` / `?access_token=`), or HTTP Basic credentials (token routes).
   */
  auth: 'public' | 'token' | 'basic';
  /** The `org` query parameter: required (400 when absent), or optional. */
  org?: 'required' | 'optional';
  /** The relationship check (spec section 5.3) run before the backend is called; 403 when it fails. */
  check?: { permission: string; on: CheckTarget; /** 403 message; default names the permission. */ denied?: string };
  /** The backend app answering; when it is down only routes naming it answer 503. */
  service: BackendName;
  /** Deployment gate (spec section 1); absent means every deployment. */
  gate?: Gate;
  handle(req: Request, ctx: RouteContext): Promise<RouteResult>;
}
