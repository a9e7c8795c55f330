import type { Bus } from './bus';
import type { NoticeCache, NoticeRule } from './notice-cache';

/**
 * What another app keeps of a service's answers, as the service's own client package defines it: the calls it answers
 * from memory, and the service's notices that keep them true. The reader only makes it follow its bus.
 */
export interface ReadModel {
  /** Follows the owner's notices on `bus`; answers how to stop. Until then nothing is kept. */
  follow(bus: Bus): Promise<() => Promise<void>>;
}

/** One cache of a read model, kept true by these of its owner's notices. */
export function following(cache: Pick<NoticeCache<unknown>, 'follow'>, rules: readonly NoticeRule[]): ReadModel {
  return { follow: (bus) => cache.follow(bus, rules) };
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
