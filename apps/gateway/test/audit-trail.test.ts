import { recordChange } from '../src/audit';
import type { Backends } from '../src/backends';
import type { Route } from '../src/route';

// How the gateway sends the audit trail to orgs-teams: a lone event at once; events of changes answered while a call
// is on its way together in the next call; a failed call logs each of its events.

type Event = { id: string; target: string };

function trail(fail = false) {
  const calls: string[][] = [];
  const waiting: (() => void)[] = [];
  const answer = (targets: string[]) => {
    calls.push(targets);
    return new Promise<object>((resolve, reject) => waiting.push(() => (fail ? reject(new Error('orgs-teams is down')) : resolve({}))));
  };
  const audit = {
    recordAuditEvent: (e: Event) => answer([e.target]),
    recordAuditEvents: (b: { events: Event[] }) => answer(b.events.map((e) => e.target)),
  };
  const warned: string[] = [];
  const log = { info: () => undefined, warn: (o: { audit: Event }) => void warned.push(o.audit.target) };
  const deps = { backends: { orgsTeams: { audit } } as unknown as Backends, log: log as never };
  const route = { method: 'post', path: '/orgs' } as Route;
  const change = (target: string) =>
    recordChange(
      route,
      { baseUrl: '/api/v1', path: target, requestId: `r-${target}`, ip: '127.0.0.1' } as never,
      { caller: { id: 1, login: 'ann' } } as never,
      201,
      deps,
    );
  /** Answers the calls on their way, and lets what follows them run. */
  const answerAll = async () => {
    while (waiting.length) waiting.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { calls, warned, change, answerAll };
}

describe('the audit trail', () => {
  it('sends a lone event at once, and the events answered meanwhile together in the next call', async () => {
    const t = trail();
    t.change('/orgs/a');
    expect(t.calls).toEqual([['/orgs/a']]);
    t.change('/orgs/b');
    t.change('/orgs/c');
    expect(t.calls).toHaveLength(1);
    await t.answerAll();
    expect(t.calls).toEqual([['/orgs/a'], ['/orgs/b', '/orgs/c']]);
    await t.answerAll();
    t.change('/orgs/d');
    expect(t.calls).toEqual([['/orgs/a'], ['/orgs/b', '/orgs/c'], ['/orgs/d']]);
    await t.answerAll();
  });

  it('logs every event of a call that failed, and goes on with the next', async () => {
    const t = trail(true);
    t.change('/orgs/a');
    t.change('/orgs/b');
    t.change('/orgs/c');
    await t.answerAll();
    await t.answerAll();
    expect(t.warned).toEqual(['/orgs/a', '/orgs/b', '/orgs/c']);
    expect(t.calls).toEqual([['/orgs/a'], ['/orgs/b', '/orgs/c']]);
  });
});
