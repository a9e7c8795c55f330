import { BusConnectError, connectBus, type Bus, type BusHealth } from '@platform/bus';
import type { ServiceConfig } from './config';
import { natsDependencyError } from './dependency-error';
import type { RunningGrpcServer } from './grpc-server';
import type { Logger } from './logger';

/** Connects an app's bus (NATS_URL, else the in-process bus); NATS that cannot be used becomes a one-line DependencyError. */
export async function openBus(config: Pick<ServiceConfig, 'NATS_URL'>, name: string, log: Logger): Promise<Bus> {
  try {
    return await connectBus(config.NATS_URL, name, log);
  } catch (err) {
    if (err instanceof BusConnectError) throw natsDependencyError(err);
    throw err;
  }
}

/**
 * Readiness of an app that uses the bus: its gRPC services report NOT_SERVING on grpc.health.v1 while the
 * bus is disconnected and SERVING again once it reconnects. Returns how to stop following.
 */
export function readinessFollowsBus(bus: Bus, grpc: Pick<RunningGrpcServer, 'setServing'>, log: Logger): () => Promise<void> {
  const apply = ({ connected }: BusHealth, changed: boolean) => {
    grpc.setServing(connected);
    if (changed)
      log.info({ serving: connected }, connected ? 'ready again: message bus reconnected' : 'not ready: message bus disconnected');
  };
  const stop = bus.onHealthChange((health) => apply(health, true));
  // The bus may have changed between connecting and serving.
  apply(bus.health(), !bus.health().connected);
  return async () => stop();
}
