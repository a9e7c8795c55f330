import { z } from 'zod';
import { portVar, serviceEnv, type ConfigOf } from '@platform/service-kit';

/** The webhook listener's settings: the common ones plus its own HTTP port and webhook secret. */
export const listenerEnv = {
  ...serviceEnv,
  MARKETPLACE_HTTP_PORT: portVar.default(8081),
  MARKETPLACE_API_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
};
export type ListenerConfig = ConfigOf<typeof listenerEnv>;
