import { InputError } from '@platform/errors';
import { pageOf, pageOfList } from './paging';

describe('the page a request asks for', () => {
  const limits = { defaultLimit: 30, maxLimit: 100 };

  it('skips the pages before it, the first page when none or one below 1 is asked for', () => {
    expect(pageOf({ page: 3, limit: 10 }, limits)).toEqual({ limit: 10, offset: 20 });
    expect([undefined, 0, -4, 1].map((page) => pageOf({ page, limit: 10 }, limits).offset)).toEqual([0, 0, 0, 0]);
  });

  it("takes the store's default for no limit, and moves a limit outside to the nearer end", () => {
    expect([undefined, 0, -5, 1, 100, 101, 5000].map((limit) => pageOf({ limit }, limits).limit)).toEqual([30, 30, 1, 1, 100, 100, 100]);
    expect(pageOf(undefined, limits)).toEqual({ limit: 30, offset: 0 });
  });

  it('refuses a limit outside as the caller’s error when the store says so', () => {
    const refusing = { ...limits, outside: 'refuse' as const };
    expect(pageOf({ page: 2 }, refusing)).toEqual({ limit: 30, offset: 30 });
    expect(pageOf({ limit: 100 }, refusing).limit).toBe(100);
    for (const limit of [-1, 101]) {
      expect(() => pageOf({ limit }, refusing)).toThrow(InputError);
      expect(() => pageOf({ limit }, refusing)).toThrow('limit must be between 1 and 100');
    }
  });

  it('is the whole list, for lists services read whole, unless a positive limit is asked for; then no maximum', () => {
    const whole = { defaultLimit: 'whole list' } as const;
    expect([undefined, { page: 2, limit: 0 }, { page: 1, limit: -1 }].map((req) => pageOf(req, whole))).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(pageOf({ page: 2, limit: 5000 }, whole)).toEqual({ limit: 5000, offset: 5000 });
  });
});

describe('a page of a list in memory', () => {
  const list = ['a', 'b', 'c', 'd', 'e'];

  it('answers its rows and the length of the whole list', () => {
    expect(pageOfList(list, { limit: 2, offset: 2 })).toEqual({ rows: ['c', 'd'], total: 5 });
    expect(pageOfList(list, { limit: 2, offset: 10 })).toEqual({ rows: [], total: 5 });
    expect(pageOfList(list, undefined)).toEqual({ rows: list, total: 5 });
  });
});
