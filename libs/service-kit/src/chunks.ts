/** `items` in consecutive parts of at most `size`, in order (none for an empty list): a statement's or a call's worth each. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  if (!(size >= 1)) throw new RangeError(`chunks of ${size}: the size must be 1 or more`);
  const parts: T[][] = [];
  for (let i = 0; i < items.length; i += size) parts.push(items.slice(i, i + size));
  return parts;
}
