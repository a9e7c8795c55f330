import { z } from 'zod';

// The `{year}/{month}` of the usage-report routes: a four-digit year and a month given as a number
// (`1`, `01` .. `12`) or an English month name (`January`, `january`, `jan`), the names generated-months lists.
// One parser for the views and the PDF download, so both accept and refuse the same paths.

export const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/** The month number 1..12 of a path's month; undefined when the text names no month. */
export function monthNumber(text: string): number | undefined {
  if (/^\d{1,2}$/.test(text)) {
    const n = Number(text);
    return n >= 1 && n <= 12 ? n : undefined;
  }
  const lower = text.toLowerCase();
  const index = MONTH_NAMES.findIndex((name) => name.toLowerCase() === lower || (lower.length === 3 && name.toLowerCase().startsWith(lower)));
  return index < 0 ? undefined : index + 1;
}

/** A report month: its year, its number 1..12, and its UTC bounds [start, end). */
export interface ReportMonth {
  year: number;
  month: number;
  /** `2026-10` */
  label: string;
  /** `October 2026` */
  title: string;
  start: Date;
  end: Date;
}

export function reportMonthOf(year: number, month: number): ReportMonth {
  return {
    year,
    month,
    label: `${year}-${String(month).padStart(2, '0')}`,
    title: `${MONTH_NAMES[month - 1]} ${year}`,
    start: new Date(Date.UTC(year, month - 1, 1)),
    end: new Date(Date.UTC(year, month, 1)),
  };
}

/** Path param `{year}`: a four-digit year → number; anything else is 400 through the route's params validation. */
export const reportYear = z
  .string()
  .regex(/^\d{4}$/, 'must be a four-digit year')
  .transform(Number)
  .meta({ description: 'Four-digit year, e.g. 2026' });

/** Path param `{month}`: a month number or English name → 1..12; anything else is 400. */
export const reportMonth = z
  .string()
  .transform((text, ctx) => {
    const n = monthNumber(text);
    if (n === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be a month number 1..12 or an English month name such as October' });
      return z.NEVER;
    }
    return n;
  })
  .meta({ type: 'string', description: 'Month: 1..12 (01 too) or an English month name as generated-months lists it' });

/** `{year}/{month}` path params; a route's params object spreads these and turns them into a ReportMonth with reportMonthOf. */
export const reportMonthParams = { year: reportYear, month: reportMonth };
