import { BUS_NAMESPACE_PATTERN, scopedSubject, streamOf, unscopedSubject } from './bus';

describe("an installation's names on NATS", () => {
  it('puts every stream and subject in the namespace, so two installations share none', () => {
    expect(streamOf('agent.v1.6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e.inventory', 'platform-3f9a1c0b7d2e')).toEqual({
      name: 'PLATFORM_3F9A1C0B7D2E_AGENT',
      subjects: ['platform-3f9a1c0b7d2e.agent.>'],
    });
    expect(streamOf('agent-desired.v1.x.desired-state', 'site-a')).toEqual({
      name: 'SITE_A_AGENT_DESIRED',
      subjects: ['site-a.agent-desired.>'],
    });
    expect(streamOf('notices.identity.orgs.changed', 'site-b').name).toBe('SITE_B_NOTICES');
    expect(scopedSubject('agent.v1.x.inventory', 'site-a')).toBe('site-a.agent.v1.x.inventory');
    const [a, b] = ['site-a', 'site-b'].map((ns) => streamOf('agent.v1.x.inventory', ns));
    expect(a.name).not.toBe(b.name);
    expect(a.subjects).not.toEqual(b.subjects);
  });

  it('hands subjects back without the namespace, and leaves names alone without one', () => {
    expect(unscopedSubject('site-a.agent.v1.x.inventory', 'site-a')).toBe('agent.v1.x.inventory');
    expect(unscopedSubject('agent.v1.x.inventory', undefined)).toBe('agent.v1.x.inventory');
    expect(scopedSubject('agent.v1.x.inventory', undefined)).toBe('agent.v1.x.inventory');
    expect(streamOf('agent.v1.x.inventory')).toEqual({ name: 'AGENT', subjects: ['agent.>'] });
  });

  it('takes namespaces that are one subject token and a stream name once upper-cased', () => {
    for (const ok of ['platform-3f9a1c0b7d2e', 'prod', 'eu-west-2']) expect(BUS_NAMESPACE_PATTERN.test(ok)).toBe(true);
    for (const bad of ['', 'Prod', 'a.b', 'a*', 'a>', 'a b', '9lives', 'a_b', 'x'.repeat(41)])
      expect(BUS_NAMESPACE_PATTERN.test(bad)).toBe(false);
  });
});
