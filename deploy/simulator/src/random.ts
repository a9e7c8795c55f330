import { createHash } from 'node:crypto';
import prand, { type RandomGenerator } from 'pure-rand';

/**
 * Deterministic randomness for the simulator (docs/decisions.md, D27): pure-rand's xoroshiro128+ seeded from
 * a hash of the run's seed and a path naming what is drawn ("hub/0", "object/<uid>"), so each part of the
 * simulated world has its own stream and adding a hub or a spoke does not change the others.
 */
export class Rng {
  private readonly gen: RandomGenerator;

  constructor(seed: number, ...path: (string | number)[]) {
    this.gen = prand.xoroshiro128plus(hash32(seed, ...path));
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return prand.unsafeUniformIntDistribution(min, max, this.gen);
  }

  /** A float in [0, 1). */
  float(): number {
    return this.int(0, 0x3fffffff) / 0x40000000;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }

  /** `n` distinct items, in the order of `items`. */
  some<T>(items: readonly T[], n: number): T[] {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(n, items.length)) chosen.add(this.int(0, items.length - 1));
    return items.filter((_, i) => chosen.has(i));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }
}

function digest(seed: number, path: (string | number)[]): Buffer {
  return createHash('sha256')
    .update(['platform-simulator', String(seed), ...path.map(String)].join('\0'))
    .digest();
}

function hash32(seed: number, ...path: (string | number)[]): number {
  return digest(seed, path).readInt32BE(0);
}

/**
 * A lower-case canonical UUID (version 5 layout: 4 bits of version, 2 of variant) from a hash of the seed and
 * a path. The same seed and path give the same UUID; so a resent simulation carries the same message ids
 * (ingestion applies each once) and cluster UIDs.
 */
export function uuidOf(seed: number, ...path: (string | number)[]): string {
  const b = digest(seed, path).subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x50;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
