import type { Bus } from './bus';

/**
 * What another app keeps of a service's answers, as the service's own client package defines it: the calls it answers
 * from memory, and the service's notices that keep them true. The reader only makes it follow its bus.
 */
export interface ReadModel {
  /** Follows the owner's notices on `bus`; answers how to stop. Until then nothing is kept. */
  follow(bus: Bus): Promise<() => Promise<void>>;
}

/** Several read models followed and stopped as one. */
export function allOf(models: readonly ReadModel[]): ReadModel {
  return {
    async follow(bus) {
      const stops: (() => Promise<void>)[] = [];
      for (const model of models) stops.push(await model.follow(bus));
      return async () => {
        for (const stop of stops) await stop();
      };
    },
  };
}
