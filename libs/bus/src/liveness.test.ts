import { FORGET_AFTER_MS, Liveness, SILENT_AFTER_MS } from './liveness';

describe('the trust rule: kept answers only while every process heard from lately is still heard', () => {
  let now = 0;
  const liveness = () => new Liveness(() => now);
  beforeEach(() => (now = 1_000));

  it('trusts while every process was heard within the silence bound, and not once one falls silent', () => {
    const l = liveness();
    expect(l.heardFrom('writer')).toBe('first');
    expect(l.heardFrom('reader')).toBe('first');
    now += SILENT_AFTER_MS;
    l.heardFrom('reader');
    expect(l.silent()).toBeUndefined();
    now += 1;
    expect(l.silent()).toBe('writer');
    // The reader's own heartbeats go on: the writer alone decides.
    l.heardFrom('reader');
    expect(l.silent()).toBe('writer');
  });

  it('says when a silent process is heard again, so that what was kept starts over', () => {
    const l = liveness();
    l.heardFrom('writer');
    now += SILENT_AFTER_MS / 2;
    expect(l.heardFrom('writer')).toBe('known');
    now += SILENT_AFTER_MS + 1;
    expect(l.heardFrom('writer')).toBe('back');
    expect(l.silent()).toBeUndefined();
  });

  it('no longer waits for a process that said goodbye', () => {
    const l = liveness();
    l.heardFrom('writer');
    l.gone('writer');
    now += SILENT_AFTER_MS * 2;
    expect(l.silent()).toBeUndefined();
  });

  it('forgets a process silent for longer than the forget bound (killed), and counts it as new if it is heard again', () => {
    const l = liveness();
    l.heardFrom('killed');
    now += FORGET_AFTER_MS;
    expect(l.silent()).toBe('killed');
    now += 1;
    expect(l.silent()).toBeUndefined();
    expect(l.heardFrom('killed')).toBe('first');
  });
});
