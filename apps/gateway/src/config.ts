import { z } from 'zod';
import { addressVar, authzClientEnv, portVar, serviceEnv, type ConfigOf } from '@platform/service-kit';
import { avatarLimitEnv, objectStorageEnv } from '@platform/object-storage';

/** The gateway's settings. It owns no data: DATABASE_URL and DATA_DIR are accepted but unused. */
export const gatewayEnv = {
  ...serviceEnv,
  HTTP_PORT: portVar.default(8080),
  ...authzClientEnv,
  ORGS_TEAMS_GRPC_ADDR: addressVar.default('127.0.0.1:50053'),
  CONTRACTS_LICENSING_GRPC_ADDR: addressVar.default('127.0.0.1:50054'),
  BILLING_DASHBOARD_GRPC_ADDR: addressVar.default('127.0.0.1:50055'),
  METRICSPROXY_GRPC_ADDR: addressVar.default('127.0.0.1:50056'),
  MARKETPLACE_LISTENER_GRPC_ADDR: addressVar.default('127.0.0.1:50057'),
  CLUSTERS_GRPC_ADDR: addressVar.default('127.0.0.1:50058'),
  MARKETPLACE_LISTENER_HTTP_URL: z.url().default('http://127.0.0.1:8081'),
  /** Per-hop deadline for calls to backends, in milliseconds. */
  BACKEND_DEADLINE_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** Signed object URLs (OBJECT_STORAGE_SIGNING_KEY; the key file under DATA_DIR in embedded mode); see docs/object-storage.md. */
  ...objectStorageEnv,
  ...avatarLimitEnv,
};
export type GatewayConfig = ConfigOf<typeof gatewayEnv>;
