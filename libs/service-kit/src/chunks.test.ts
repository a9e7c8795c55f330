import { chunks } from './chunks';

describe('chunks', () => {
  it('splits a list into consecutive parts of at most the size, in order', () => {
    expect(chunks([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunks(['a', 'b'], 2)).toEqual([['a', 'b']]);
    expect(chunks(['a', 'b'], 1000)).toEqual([['a', 'b']]);
  });

  it('answers no part for an empty list', () => {
    expect(chunks([], 25)).toEqual([]);
  });

  it('refuses a size below one, which would never end', () => {
    expect(() => chunks([1], 0)).toThrow(RangeError);
    expect(() => chunks([1], Number.NaN)).toThrow(RangeError);
  });
});
