import { Writable } from 'node:stream';
import { createLogger } from './logger';

describe('an app’s log lines', () => {
  it('name the level and give an ISO 8601 time, the service, and never a secret', () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const log = createLogger('orgs-teams', 'info', sink);
    log.warn({ user: 'alice', password: 'hunter22', req: { headers: { authorization: 'token abc' } } }, 'something happened');
    log.debug('not at info level');
    expect(lines).toEqual([
      expect.objectContaining({ level: 'warn', service: 'orgs-teams', user: 'alice', password: '[redacted]', msg: 'something happened' }),
    ]);
    expect(String(lines[0].time)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(JSON.stringify(lines)).not.toMatch(/hunter22|token abc/);
  });
});
