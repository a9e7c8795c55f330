import { auditEventOf, flushAuditTrail, recordChange, recordedWith } from '../src/audit';
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
  const logged: { target: string; status: number }[] = [];
  const log = {
    info: (o: { audit: Event & { status: number } }) => void logged.push({ target: o.audit.target, status: o.audit.status }),
    warn: (o: { audit: Event }) => void warned.push(o.audit.target),
  };
  const deps = { backends: { orgsTeams: { audit } } as unknown as Backends, log: log as never };
  const route = { method: 'post', path: '/orgs', response: { status: 201 } } as Route;
  /** The request's event as the edge makes it before the handler. */
  const eventOf = (target: string) =>
    auditEventOf(
      route,
      { baseUrl: '/api/v1', path: target, requestId: `r-${target}`, ip: '127.0.0.1' } as never,
      { caller: { id: 1, login: 'ann' } } as never,
    );
  const change = (target: string, status = 201) => recordChange(eventOf(target), status, deps);
  /** Answers the calls on their way, and lets what follows them run. */
  const answerAll = async () => {
    while (waiting.length) waiting.shift()!();
    await jest.advanceTimersByTimeAsync(0);
  };
  return { calls, warned, logged, change, eventOf, deps, answerAll, audit: audit as unknown as Backends['orgsTeams']['audit'] };
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

  it('sends nothing for an event the write recorded with its change, and still logs it; sends it when the write did not', async () => {
    const t = trail();
    // The write answered that it recorded the event: the log line alone.
    const recorded = t.eventOf('/orgs/a')!;
    const answer = { id: 7, auditRecorded: true };
    expect(recordedWith(recorded, answer)).toBe(answer);
    recordChange(recorded, 201, t.deps);
    // A write that did not (an older orgs-teams, a member already there): the trail as before.
    const unrecorded = t.eventOf('/orgs/b')!;
    recordedWith(unrecorded, { auditRecorded: undefined });
    recordChange(unrecorded, 201, t.deps);
    // Recorded, but the answer's status is not the one recorded: sent with the answer's (its id keeps it once).
    const otherStatus = t.eventOf('/orgs/c')!;
    recordedWith(otherStatus, { auditRecorded: true });
    recordChange(otherStatus, 200, t.deps);
    await jest.advanceTimersByTimeAsync(25);
    expect(t.calls).toEqual([['/orgs/b', '/orgs/c']]);
    expect(t.logged).toEqual([
      { target: '/orgs/a', status: 201 },
      { target: '/orgs/b', status: 201 },
      { target: '/orgs/c', status: 200 },
    ]);
    await t.answerAll();
  });

  it('makes no event for a read, nor for a change nobody signed in for', () => {
    const t = trail();
    const req = { baseUrl: '/api/v1', path: '/orgs', requestId: 'r', ip: '' } as never;
    expect(
      auditEventOf({ method: 'get', path: '/orgs', response: { status: 200 } } as Route, req, { caller: { id: 1, login: 'ann' } } as never),
    ).toBe(undefined);
    expect(auditEventOf({ method: 'post', path: '/orgs', response: { status: 201 } } as Route, req, {} as never)).toBe(undefined);
    expect(t.eventOf('/orgs/a')?.event).toMatchObject({
      action: expect.any(String),
      actorId: 1,
      actorLogin: 'ann',
      status: 201,
      target: '/orgs/a',
    });
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
