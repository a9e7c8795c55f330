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

/**
 * The door a handler reads kept state through: of a reader's clients `C`, only the read methods its owner's read model
 * keeps, as `R` names them (`R[service][method]`: the rule or the description of what is kept, in the owner's client
 * library). Mapped over `R`, so that "go to definition" from a call reaches the owner's rule, not a generated client.
 * Its calls are answered from what the reader keeps once the fence has passed, or asked and kept.
 */
export type KeptDoor<C, R> = {
  readonly [S in keyof R]: S extends keyof C ? { readonly [M in keyof R[S]]: M extends keyof C[S] ? C[S][M] : never } : never;
};

/** Of a reader's clients `C`, every method but the kept reads `R` names: the door a handler calls a service through. */
export type CallDoor<C, R> = { readonly [S in keyof C]: S extends keyof R ? Omit<C[S], keyof R[S]> : C[S] };
