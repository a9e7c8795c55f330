import { BusTimeoutError } from '@platform/bus';
import { keepServingOnBusFailures } from './bus-readiness';
import { createLogger } from './logger';

function capturedLog() {
  const lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  const log = createLogger('guarded', 'info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

/** A NATS client error as nats.js makes them (class NatsError, a code). */
const natsTimeout = () => Object.assign(new Error('TIMEOUT'), { name: 'NatsError', code: 'TIMEOUT' });

describe('keepServingOnBusFailures', () => {
  it('logs a bus failure nothing handled, one line with its code, and keeps the process', () => {
    const { log, lines } = capturedLog();
    const exit = jest.fn();
    const stop = keepServingOnBusFailures(log, exit);
    try {
      process.emit('unhandledRejection', natsTimeout(), Promise.resolve());
      process.emit('unhandledRejection', new BusTimeoutError('agent-rpc.v1.x.resource-history'), Promise.resolve());
    } finally {
      stop();
    }
    expect(exit).not.toHaveBeenCalled();
    expect(lines).toEqual([
      expect.objectContaining({ level: 'error', msg: 'a bus request failed and nothing handled it; serving on', code: 'TIMEOUT' }),
      expect.objectContaining({ level: 'error', reason: 'no reply on agent-rpc.v1.x.resource-history in time' }),
    ]);
  });

  it('ends the process on any other unhandled rejection, as Node would, saying why', () => {
    const { log, lines } = capturedLog();
    const exit = jest.fn();
    const stop = keepServingOnBusFailures(log, exit);
    try {
      process.emit('unhandledRejection', new TypeError('a bug of ours'), Promise.resolve());
    } finally {
      stop();
    }
    expect(exit).toHaveBeenCalledWith(1);
    expect(lines).toEqual([expect.objectContaining({ level: 'fatal', msg: 'unhandled rejection' })]);
  });
});
