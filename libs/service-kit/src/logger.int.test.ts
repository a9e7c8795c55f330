import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { LogLines } from '@platform/testing';
import { createLogger, logFormat } from './logger';

describe('an app’s log lines', () => {
  it('name the level and give an ISO 8601 time, the service, and never a secret', () => {
    const written = new LogLines();
    const log = createLogger('orgs-teams', 'info', written.stream);
    log.warn({ user: 'alice', password: 'hunter22', req: { headers: { authorization: 'token abc' } } }, 'something happened');
    log.debug('not at info level');
    const lines = written.entries;
    expect(lines).toEqual([
      expect.objectContaining({ level: 'warn', service: 'orgs-teams', user: 'alice', password: '[redacted]', msg: 'something happened' }),
    ]);
    expect(String(lines[0].time)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(JSON.stringify(lines)).not.toMatch(/hunter22|token abc/);
  });

  it('are human lines in the pretty format: time, level, service and message on one line, secrets still redacted', () => {
    const written = new LogLines();
    const log = createLogger('gateway', 'info', written.stream, 'pretty');
    const lines = written.text;
    log.info({ port: 8080, password: 'hunter22' }, 'listening');
    expect(lines).toHaveLength(1);
    expect(() => JSON.parse(lines[0])).toThrow();
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(gateway\): listening \{"port":8080,"password":"\[redacted\]"\}$/);
  });

  it('follow LOG_FORMAT, and without it are pretty on a terminal and JSON elsewhere', () => {
    expect(logFormat({ LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
    expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({}, false)).toBe('json');
  });

  it('go to stdout in the format LOG_FORMAT names', () => {
    // A process of its own: the format is the process's, read from its environment when a logger is made.
    const logged = (format: string) => {
      const res = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          '-e',
          `require(${JSON.stringify(path.join(__dirname, 'logger.ts'))}).createLogger('clusters').warn('disk almost full')`,
        ],
        {
          env: { ...process.env, LOG_FORMAT: format, TSX_TSCONFIG_PATH: path.join(__dirname, '../../../tsconfig.base.json') },
          encoding: 'utf8',
        },
      );
      expect(res.stderr).toBe('');
      return res.stdout.trim();
    };
    expect(logged('pretty')).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN \(clusters\): disk almost full$/);
    expect(JSON.parse(logged('json'))).toMatchObject({ level: 'warn', service: 'clusters', msg: 'disk almost full' });
  });
});
