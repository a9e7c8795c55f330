import pino, { type Logger } from 'pino';

export type { Logger };

/** Paths whose values never reach a log line (secrets, tokens, passwords). */
const REDACT = [
  'password',
  '*.password',
  'token',
  '*.token',
  'secret',
  '*.secret',
  '*.secretAccessKey',
  'authorization',
  '*.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.adminPassword',
];

/** JSON logger for one service; every line carries the service name. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({ name: service, level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service } });
}
