import { backoffMs } from './lease-queue';

describe('backoffMs', () => {
  it('waits the base after the first failure and doubles it after each next one, up to the longest wait', () => {
    const backoff = { baseMs: 30_000, maxMs: 3_600_000 };
    expect([1, 2, 3, 4, 7, 8, 50].map((failures) => backoffMs(failures, backoff))).toEqual([
      30_000, 60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000,
    ]);
  });

  it('stops doubling after maxDoublings, even below the longest wait', () => {
    const backoff = { baseMs: 10, maxMs: 3_600_000, maxDoublings: 16 };
    expect([1, 2, 17, 18, 40].map((failures) => backoffMs(failures, backoff))).toEqual([10, 20, 655_360, 655_360, 655_360]);
    expect(backoffMs(40, { ...backoff, baseMs: 5_000, maxMs: 300_000 })).toBe(300_000);
  });
});
