import pino, { type Logger } from 'pino';
import { traceLogFields, tracingStarted } from '@platform/telemetry';

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

/**
 * JSON logger for one service; every line carries the level by name (`"level":"info"`), an ISO 8601 time, the
 * service name, and with tracing on, the trace and span ids of the call being served (`trace_id`, `span_id`),
 * so log collectors and people read the same fields without pino's numeric levels and epoch milliseconds.
 */
export function createLogger(service: string, level = 'info', destination?: pino.DestinationStream): Logger {
  const mixin = tracingStarted() ? traceLogFields : undefined;
  const options: pino.LoggerOptions = {
    name: service,
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    base: { service },
    mixin,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}
