/** A timestamp column as Unix seconds, the form the contracts carry; 0 for null (never happened). */
export function unixSeconds(d: Date | string | null | undefined): number {
  return d ? Math.floor(new Date(d).getTime() / 1000) : 0;
}
