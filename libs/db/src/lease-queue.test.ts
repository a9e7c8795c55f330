import { backoffMs } from './lease-queue';

describe('backoffMs', () => {
  it('waits the base after the first failure and doubles it after each next one, up to the longest wait', () => {
    const backoff = { baseMs: 30_000, maxMs: 3_600_000 };
    expect([1, 2, 3, 4, 7, 8, 50].map((failures) => backoffMs(failures, backoff))).toEqual([
      30_000, 60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000,
    ]);
  });

  it('never overflows: a long run of failures waits the longest wait', () => {
    expect([1, 2, 17, 1_100, 1e6].map((failures) => backoffMs(failures, { baseMs: 10, maxMs: 300_000 }))).toEqual([
      10, 20, 300_000, 300_000, 300_000,
    ]);
  });
});
