import type { Binding, Contract } from './api';

/** What the contract screens say about a contract and its clusters, and the checks their forms make. */

export type ContractState = 'Active' | 'Revoked' | 'Expired' | 'Not started';

/** Revoked wins over the term: a revoked contract issues nothing, whatever its dates. */
export function contractState(c: Pick<Contract, 'revoked' | 'start' | 'end'>, nowUnix = Date.now() / 1000): ContractState {
  if (c.revoked) return 'Revoked';
  if (c.end && c.end <= nowUnix) return 'Expired';
  if (c.start && c.start > nowUnix) return 'Not started';
  return 'Active';
}

/** A contract's name as lists and headings show it; two contracts of a create share their name, so the product tells them apart. */
export function contractTitle(c: Pick<Contract, 'id' | 'name' | 'product'>): string {
  return `${c.name || `Contract ${c.id}`} (${c.product})`;
}

/** A day of Unix seconds, without the time: a contract's term is in days. */
export function day(unix: number | undefined): string {
  return unix ? new Date(unix * 1000).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }) : '—';
}

export function term(c: Pick<Contract, 'start' | 'end'>): string {
  return `${day(c.start)} – ${day(c.end)}`;
}

/** A bound cluster by the name people know it by: the binding's display name, the inventory's, else its UUID. */
export function clusterName(b: Pick<Binding, 'displayName' | 'clusterStatus' | 'cluster'>): string {
  return b.displayName || b.clusterStatus.name || b.cluster;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

// Deliberately loose (one @, a dot in the domain, no spaces): contracts-licensing makes the real check.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A comma- or newline-separated list of addresses; the first that is not one is the problem. */
export function emailList(text: string, label: string): { list: string[]; problem?: string } {
  const list = text
    .split(/[,\n;]/)
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = list.find((s) => !EMAIL.test(s));
  return { list, problem: bad ? `${label}: "${bad}" is not an email address` : undefined };
}

/**
 * A date input's value (YYYY-MM-DD) as Unix seconds of that local day's start, or its end (the last second)
 * for an end date, so a contract ending on a day covers all of it. Undefined when it is no date.
 */
export function dateToUnix(value: string, endOfDay = false): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const date = new Date(`${value}T${endOfDay ? '23:59:59' : '00:00:00'}`);
  return Number.isNaN(date.getTime()) ? undefined : Math.floor(date.getTime() / 1000);
}

/** Unix seconds as a date input's value (local day). */
export function unixToDate(unix: number): string {
  const d = new Date(unix * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** A form's text value, trimmed ('' when absent or a file). */
export function text(data: FormData, name: string): string {
  const v = data.get(name);
  return typeof v === 'string' ? v.trim() : '';
}
