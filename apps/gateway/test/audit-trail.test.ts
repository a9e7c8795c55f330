import { flushAuditTrail, recordChange } from '../src/audit';
import type { Backends } from '../src/backends';
import type { Route } from '../src/route';

// How the gateway sends the audit trail to orgs-teams: an event waits 25 ms for others, and those answered meanwhile go
// in its call; events of changes answered while a call is on its way go together in the next call; a failed call logs
// each of its events. On jest's clock.

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
    await jest.advanceTimersByTimeAsync(0);
  };
  return { calls, warned, change, answerAll, audit: audit as unknown as Backends['orgsTeams']['audit'] };
}

describe('the audit trail', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends an event after 25 ms with those answered meanwhile, and those answered while it is on its way in the next call', async () => {
    const t = trail();
    t.change('/orgs/a');
    await jest.advanceTimersByTimeAsync(24);
    t.change('/orgs/b');
    expect(t.calls).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(t.calls).toEqual([['/orgs/a', '/orgs/b']]);
    t.change('/orgs/c');
    t.change('/orgs/d');
    await jest.advanceTimersByTimeAsync(100);
    expect(t.calls).toHaveLength(1);
    await t.answerAll();
    expect(t.calls).toEqual([
      ['/orgs/a', '/orgs/b'],
      ['/orgs/c', '/orgs/d'],
    ]);
    await t.answerAll();
    // A lone event goes alone once its 25 ms are over.
    t.change('/orgs/e');
    await jest.advanceTimersByTimeAsync(25);
    expect(t.calls.at(-1)).toEqual(['/orgs/e']);
    await t.answerAll();
  });

  it('logs every event of a call that failed, and goes on with the next', async () => {
    const t = trail(true);
    t.change('/orgs/a');
    await jest.advanceTimersByTimeAsync(25);
    t.change('/orgs/b');
    t.change('/orgs/c');
    await t.answerAll();
    await t.answerAll();
    expect(t.warned).toEqual(['/orgs/a', '/orgs/b', '/orgs/c']);
    expect(t.calls).toEqual([['/orgs/a'], ['/orgs/b', '/orgs/c']]);
  });

  it('sends what waits at once when the gateway stops, and resolves once it is stored', async () => {
    const t = trail();
    t.change('/orgs/a');
    let flushed = false;
    void flushAuditTrail(t.audit).then(() => (flushed = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(t.calls).toEqual([['/orgs/a']]);
    expect(flushed).toBe(false);
    await t.answerAll();
    expect(flushed).toBe(true);
  });
});
