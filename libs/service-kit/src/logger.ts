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
 * JSON logger for one service; every line carries the service name, and with tracing on, the trace and span
 * ids of the call being served (`trace_id`, `span_id`).
 */
export function createLogger(service: string, level = 'info'): Logger {
  const mixin = tracingStarted() ? traceLogFields : undefined;
  return pino({ name: service, level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service }, mixin });
}
