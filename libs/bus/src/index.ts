import type { Bus } from './bus';
import { InProcessBus } from './in-process-bus';
import { NatsBus } from './nats-bus';

export * from './bus';
export { InProcessBus } from './in-process-bus';
export { NatsBus } from './nats-bus';

let shared: InProcessBus | undefined;

/** NATS when a URL is configured, otherwise the process-wide in-process bus (all apps in one process). */
export async function connectBus(natsUrl: string | undefined, name: string): Promise<Bus> {
  if (natsUrl) return NatsBus.create(natsUrl, name);
  shared ??= new InProcessBus();
  return shared;
}
