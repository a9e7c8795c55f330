import { activitySince, goDurationMs } from '../src/params';

describe('the dashboard activity window (limit)', () => {
  it('reads Go durations as Go does', () => {
    expect(goDurationMs('720h')).toBe(720 * 3_600_000);
    expect(goDurationMs('90m')).toBe(90 * 60_000);
    expect(goDurationMs('1h30m')).toBe(90 * 60_000);
    expect(goDurationMs('1.5h')).toBe(90 * 60_000);
    expect(goDurationMs('2h45m30s')).toBe((2 * 3600 + 45 * 60 + 30) * 1000);
    expect(goDurationMs('300ms')).toBe(300);
    expect(goDurationMs('1.h')).toBe(3_600_000);
    expect(goDurationMs('.5h')).toBe(1_800_000);
    expect(goDurationMs('0')).toBe(0);
    for (const bad of ['', '720', 'h', '1d', '-5m', '1h 30m', '.h', '5 hours']) expect(goDurationMs(bad)).toBeUndefined();
  });

  it('turns a duration, a date or nothing into the start of the window; anything else is an error', () => {
    const now = Date.now();
    const hoursAgo = (d: Date) => Math.round((now - d.getTime()) / 3_600_000);
    expect(hoursAgo(activitySince.parse('720h'))).toBe(720);
    expect(hoursAgo(activitySince.parse(undefined))).toBe(180 * 24);
    expect(activitySince.parse('2026-06-01').toISOString()).toBe('2026-06-01T00:00:00.000Z');
    for (const bad of ['2026-02-30', '2026-13-01', '26-06-01', 'yesterday', '720'])
      expect(activitySince.safeParse(bad).success).toBe(false);
    expect(activitySince.safeParse('soon').error?.issues[0].message).toMatch(/Go duration/);
  });
});
