import { isValidElement, useId, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { ApiError } from '../api/client';
import type { Action, Loaded } from './data';
import { isRefusal, NoAccess } from './no-access';

export { joined, useAction } from './data';
export { ActionScope, useNothingDoneYet } from './last-action';
export { NoAccess, Refusal, ScreenAccess } from './no-access';

/** The API's `message` (or the browser's), as an alert screen readers announce, with each field's problem on a 422. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  const status = error instanceof ApiError ? ` (${error.status})` : '';
  const fields = error instanceof ApiError ? fieldErrors(error.errors) : [];
  if (fields.length === 0)
    return (
      <p role="alert" className="error">
        {text}
        {status}
      </p>
    );
  return (
    <div role="alert" className="error">
      <p>
        {text}
        {status}
      </p>
      <ul>
        {fields.map(({ field, description }) => (
          <li key={`${field}:${description}`}>
            <strong>{field}</strong>: {description}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The `errors` of a 422 answer (`[{field, description}]`), skipping anything else. */
function fieldErrors(errors: unknown): { field: string; description: string }[] {
  if (!Array.isArray(errors)) return [];
  return errors
    .filter((e): e is { field: unknown; description: unknown } => typeof e === 'object' && e !== null)
    .map((e) => ({ field: String(e.field ?? ''), description: String(e.description ?? '') }))
    .filter((e) => e.description);
}

/**
 * A loaded value: a spinner line while loading, the error if it failed, else the children. A refusal (403) is not an
 * error to show here: the whole screen becomes the "no access" page (thrown to the shell's boundary), unless this is
 * a `part` of a screen the caller does see (who holds a role, on the role's page), which then says so in a line.
 */
export function Show<T>({ loaded, children, part }: { loaded: Loaded<T>; children: (data: T) => ReactNode; part?: string }) {
  if (isRefusal(loaded.error)) {
    if (part) return <NoAccess part={part} reason={loaded.error.message} />;
    throw loaded.error;
  }
  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (loaded.data === undefined) return <p aria-busy="true">Loading…</p>;
  return <>{children(loaded.data)}</>;
}

/** An action's outcome: its error, or what it did. */
export function Outcome({ action }: { action: Action }) {
  if (action.error) return <ErrorMessage error={action.error} />;
  if (action.done)
    return (
      <p role="status" className="done">
        {action.done}
      </p>
    );
  return null;
}

/**
 * A form that validates before it sends: `validate` returns the first problem (shown, nothing sent) or nothing;
 * `submit` runs as the action, its API error shown under the form. Either is the screen's last action, so what an
 * earlier one said goes (`ActionScope`).
 */
export function Form({
  action,
  validate,
  submit,
  children,
  label,
  submitLabel = 'Save',
}: {
  action: Action;
  validate?: (data: FormData) => string | undefined;
  submit: (data: FormData, form: HTMLFormElement) => Promise<string | void>;
  children: ReactNode;
  label: string;
  submitLabel?: string;
}) {
  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const wrong = validate?.(data);
    // A problem found before sending is this form's outcome: it replaces what the form (or anything else) said before.
    if (wrong) return action.refuse(wrong);
    if (await action.run(() => submit(data, form))) form.reset();
  };
  return (
    <form onSubmit={onSubmit} aria-label={label} className="form" noValidate>
      {children}
      <button type="submit" disabled={action.busy}>
        {action.busy ? 'Working…' : submitLabel}
      </button>
      <Outcome action={action} />
    </form>
  );
}

/** A labelled input. */
export function Field({
  label,
  name,
  type = 'text',
  required,
  defaultValue,
  placeholder,
  hint,
  ...rest
}: {
  label: string;
  name: string;
  type?: string;
  required?: boolean;
  defaultValue?: string | number;
  placeholder?: string;
  hint?: string;
  accept?: string;
  autoComplete?: string;
  min?: string | number;
  max?: string | number;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {required && <span aria-hidden="true"> *</span>}
      </label>
      <input id={id} name={name} type={type} required={required} defaultValue={defaultValue} placeholder={placeholder} {...rest} />
      {hint && <small>{hint}</small>}
    </div>
  );
}

/** A labelled select of options. */
export function Select({
  label,
  name,
  options,
  defaultValue,
}: {
  label: string;
  name: string;
  options: (string | [string, string])[];
  defaultValue?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={defaultValue}>
        {options.map((o) => {
          const [value, text] = typeof o === 'string' ? [o, o] : o;
          return (
            <option key={value} value={value}>
              {text}
            </option>
          );
        })}
      </select>
    </div>
  );
}

/** The first missing required field of a form, as a message. */
export function missing(data: FormData, ...fields: [name: string, label: string][]): string | undefined {
  const absent = fields.find(([name]) => !String(data.get(name) ?? '').trim());
  return absent && `${absent[1]} is required`;
}

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** What the column sorts and filters by, where the cell's text is not it (a time, a component's output). */
  value?: (row: T) => string | number | null | undefined;
  /** A column of buttons does not sort; every other column does (`Actions` columns never). */
  sortable?: boolean;
}

/** The text a cell shows: strings and numbers, through elements' children (a link's text, a code's content). */
export function textOf(node: ReactNode): string {
  if (node === null || node === undefined || typeof node === 'boolean') return '';
  if (typeof node === 'string' || typeof node === 'number' || typeof node === 'bigint') return String(node);
  if (Array.isArray(node)) return node.map((n: ReactNode) => textOf(n)).join('');
  if (isValidElement<{ children?: ReactNode }>(node)) return textOf(node.props.children);
  return '';
}

const sortableColumn = <T,>(c: Column<T>) => c.sortable ?? c.header !== 'Actions';
const valueOf = <T,>(c: Column<T>, row: T): string | number => {
  const v = c.value ? c.value(row) : textOf(c.cell(row));
  return v === null || v === undefined ? '' : v;
};
const COLLATOR = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
/** Empty cells ('' or '—') last whichever way, numbers as numbers, text as people sort it (2 before 10). */
function compareValues(a: string | number, b: string | number): number {
  const emptyA = a === '' || a === '—';
  const emptyB = b === '' || b === '—';
  if (emptyA || emptyB) return emptyA === emptyB ? 0 : emptyA ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return COLLATOR.compare(String(a), String(b));
}

/** Tables with more rows than this offer a filter. */
const FILTER_FROM = 5;

/**
 * A table of rows, `pageSize` at a time, with a pager when there are more. Every column but the actions sorts (its
 * header is a button; the sorted one says which way in `aria-sort`), and a table of more than a few rows has a
 * filter keeping the rows whose text contains what is typed.
 */
export function Table<T>({
  caption,
  columns,
  rows,
  rowKey,
  pageSize = 20,
  empty = 'None yet.',
}: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T, index: number) => string | number;
  pageSize?: number;
  empty?: string;
}) {
  const [page, setPage] = useState(0);
  const [sort, setSort] = useState<{ header: string; descending: boolean }>();
  const [filter, setFilter] = useState('');
  const shownRows = useMemo(() => {
    const needle = filter.trim().toLocaleLowerCase();
    const kept = needle
      ? rows.filter((row) => columns.some((c) => sortableColumn(c) && String(valueOf(c, row)).toLocaleLowerCase().includes(needle)))
      : rows;
    const by = sort && columns.find((c) => c.header === sort.header);
    if (!by) return kept;
    const keyed = kept.map((row) => ({ row, key: valueOf(by, row) }));
    // Stable, so rows with the same value keep the API's order; empty values stay last either way.
    keyed.sort((a, b) => {
      const order = compareValues(a.key, b.key);
      const empties = a.key === '' || a.key === '—' || b.key === '' || b.key === '—';
      return sort.descending && !empties ? -order : order;
    });
    return keyed.map((k) => k.row);
  }, [rows, columns, sort, filter]);
  const pages = Math.max(1, Math.ceil(shownRows.length / pageSize));
  const current = Math.min(page, pages - 1);
  const shown = shownRows.slice(current * pageSize, (current + 1) * pageSize);
  if (rows.length === 0)
    return (
      <p className="empty">
        {caption}: {empty}
      </p>
    );
  const sortBy = (header: string) => {
    setSort((s) => ({ header, descending: s?.header === header ? !s.descending : false }));
    setPage(0);
  };
  return (
    <div className="table-wrap">
      {rows.length > FILTER_FROM && (
        <div className="table-filter">
          <input
            type="search"
            aria-label={`Filter ${caption}`}
            placeholder="Filter"
            value={filter}
            onChange={(e) => {
              setFilter(e.target.value);
              setPage(0);
            }}
          />
          {filter.trim() && (
            <span className="muted" role="status">
              {shownRows.length} of {rows.length}
            </span>
          )}
        </div>
      )}
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => {
              const sorted = sort?.header === c.header ? (sort.descending ? 'descending' : 'ascending') : undefined;
              return (
                <th key={c.header} scope="col" aria-sort={sorted}>
                  {sortableColumn(c) ? (
                    <button type="button" className="sort" onClick={() => sortBy(c.header)}>
                      {c.header}
                      <span aria-hidden="true">{sorted === 'ascending' ? ' ▲' : sorted === 'descending' ? ' ▼' : ''}</span>
                    </button>
                  ) : (
                    c.header
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {shown.map((row, i) => (
            <tr key={rowKey(row, current * pageSize + i)}>
              {columns.map((c) => (
                <td key={c.header}>{c.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {shownRows.length === 0 && <p className="empty">No row matches “{filter.trim()}”.</p>}
      {pages > 1 && (
        <nav className="pager" aria-label={`${caption} pages`}>
          <button type="button" onClick={() => setPage(current - 1)} disabled={current === 0}>
            Previous
          </button>
          <span>
            Page {current + 1} of {pages} ({shownRows.length})
          </span>
          <button type="button" onClick={() => setPage(current + 1)} disabled={current >= pages - 1}>
            Next
          </button>
        </nav>
      )}
    </div>
  );
}

/** A quantity against its limit, as a gauge (a native meter, so assistive technology reads it). */
export function Gauge({ label, value, max, unit = '' }: { label: string; value: number; max: number; unit?: string }) {
  const id = useId();
  const share = max > 0 ? Math.round((value / max) * 100) : 0;
  return (
    <div className="gauge">
      <label htmlFor={id}>{label}</label>
      <meter id={id} min={0} max={max || 1} value={value} low={max * 0.8} high={max * 0.95} optimum={0} />
      <span>
        {value.toLocaleString()} / {max.toLocaleString()} {unit} ({share}%)
      </span>
    </div>
  );
}

/** A page section with a heading. */
export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="panel">
      <header>
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** Gitea's zero time, which the API answers for a date-time that never happened (a user who never signed in). */
export const NEVER = '0001-01-01T00:00:00Z';

/** Whether a date-time the API answered says "never": Gitea's zero time (or nothing at all). */
export const isNever = (value: number | string | undefined | null): value is undefined | null | '' | 0 =>
  value === undefined || value === null || value === '' || value === 0 || value === NEVER;

/** Unix seconds or RFC 3339 as a short local date and time. */
export function when(value: number | string | undefined | null): string {
  if (isNever(value)) return '—';
  const date = typeof value === 'number' ? new Date(value * 1000) : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

/** Unix seconds or RFC 3339 as milliseconds, for sorting a column of times (`when` shows them). */
export function instant(value: number | string | undefined | null): number | undefined {
  if (isNever(value)) return undefined;
  const ms = typeof value === 'number' ? value * 1000 : Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
