import { streamOf } from '@platform/bus';
import { ALL_REPORTS, REPORT_KINDS, REQUEST_KINDS, kindEnum, kindName, parseSubject, reportFilter, subjectOf } from './subjects';

const UID = '0b6f6c2e-7d3a-4f51-9a3e-1c2d3e4f5a6b';

describe('agent subjects', () => {
  it('names reports agent.v1.<clusterUID>.<kind>, all in stream AGENT', () => {
    for (const kind of REPORT_KINDS) {
      const subject = subjectOf(UID, kind);
      expect(subject).toBe(`agent.v1.${UID}.${kind}`);
      expect(streamOf(subject)).toEqual({ name: 'AGENT', subjects: [ALL_REPORTS] });
      expect(parseSubject(subject)).toEqual({ clusterUID: UID, kind });
      // Valid NATS tokens: no empty token, no wildcard, no white space.
      expect(subject.split('.').every((t) => /^[A-Za-z0-9_-]+$/.test(t))).toBe(true);
    }
    expect(reportFilter('usage-sample')).toBe('agent.v1.*.usage-sample');
  });

  it('keeps requests out of the report stream', () => {
    for (const kind of REQUEST_KINDS) {
      const subject = subjectOf(UID, kind);
      expect(subject).toBe(`agent-rpc.v1.${UID}.${kind}`);
      expect(streamOf(subject).name).not.toBe('AGENT');
      expect(parseSubject(subject)).toEqual({ clusterUID: UID, kind });
    }
  });

  it('refuses cluster UIDs that are not lower-case UUIDs, and unknown kinds', () => {
    expect(() => subjectOf(UID.toUpperCase(), 'inventory')).toThrow(/lower-case UUID/);
    expect(() => subjectOf('a.b', 'inventory')).toThrow();
    expect(() => subjectOf('*', 'inventory')).toThrow();
    expect(() => subjectOf(UID, 'nope' as never)).toThrow(/unknown/);
  });

  it('parses only subjects of this version', () => {
    for (const s of [
      `agent.v2.${UID}.inventory`,
      `agent.v1.${UID}.resource-history`,
      `agent-rpc.v1.${UID}.inventory`,
      `agent.v1.${UID}.nope`,
      `agent.v1.not-a-uuid.inventory`,
      `agent.v1.${UID}.inventory.extra`,
      `platform.agent.v1.${UID}.inventory`,
    ])
      expect(parseSubject(s)).toBeUndefined();
  });

  it('maps kind names to the proto enum and back', () => {
    for (const kind of [...REPORT_KINDS, ...REQUEST_KINDS]) expect(kindName(kindEnum(kind))).toBe(kind);
    expect(kindName(0)).toBeUndefined();
  });
});
