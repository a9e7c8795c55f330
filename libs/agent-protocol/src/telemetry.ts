import { Counter, type CounterChild } from '@platform/telemetry';

/** Counts of `open`: messages verified, and messages refused by reason (docs/operations.md#metrics). */
const opened = new Counter('agent_messages_opened_total', 'Agent-protocol messages verified (signature, account, ownership), by kind.', [
  'kind',
]);
const refused = new Counter(
  'agent_messages_refused_total',
  'Agent-protocol messages refused and never applied, by reason and kind ("unknown" when the kind could not be read).',
  ['reason', 'kind'],
);

const children = new Map<string, CounterChild>();

function cached(key: string, make: () => CounterChild): CounterChild {
  let child = children.get(key);
  if (!child) children.set(key, (child = make()));
  return child;
}

export function countOpened(kind: string): void {
  cached(`o ${kind}`, () => opened.child(kind)).inc();
}

export function countRefused(reason: string, kind: string): void {
  cached(`r ${reason} ${kind}`, () => refused.child(reason, kind)).inc();
}
