/**
 * How every section writes the values the spec gives one form for. Section presenters (sections/<section>/
 * presenters.ts) shape their own resources from these.
 */

/** Unix seconds as RFC3339 without fractional seconds, as the spec's date-times are written. */
export const rfc3339 = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.000Z$/, 'Z');
