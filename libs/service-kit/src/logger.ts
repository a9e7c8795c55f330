import pino, { type Logger } from 'pino';
import { traceLogFields, tracingStarted } from '@platform/telemetry';

export type { Logger };

/** `json`: one JSON object a line, for collectors; `pretty`: one human line each, for a terminal. */
export type LogFormat = 'json' | 'pretty';

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
 * The format `LOG_FORMAT` asks for (`json` or `pretty`); unset, pretty when stdout is a terminal and JSON
 * otherwise, so `npm start` in a shell is readable and a container's or a pipe's lines stay JSON. Read from the
 * process's environment, not an app's config: every logger of a process writes to the same stdout, the
 * launcher's apps included. A value that is neither is reported by the apps' config validation (serviceEnv).
 */
export function logFormat(env: NodeJS.ProcessEnv = process.env, stdoutIsTTY = process.stdout.isTTY === true): LogFormat {
  const asked = env.LOG_FORMAT;
  if (asked === 'json' || asked === 'pretty') return asked;
  return stdoutIsTTY ? 'pretty' : 'json';
}

/**
 * A destination that turns each JSON line into a human one (`[08:00:01.123] INFO (gateway): listening {"port":8080}`)
 * and writes it synchronously, in this process: no worker thread, and nothing lost when the process exits
 * right after a line (a fatal start failure). The service name stands in the parentheses, so the
 * `service` field is left out.
 */
export function prettyDestination(out: pino.DestinationStream, colorize = false): pino.DestinationStream {
  // Loaded here: a process logging JSON (a container, every test) never loads the pretty printer.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { prettyFactory } = require('pino-pretty') as typeof import('pino-pretty');
  const prettify = prettyFactory({ colorize, singleLine: true, ignore: 'pid,hostname,service', translateTime: 'SYS:HH:MM:ss.l' });
  return { write: (line: string) => void out.write(prettify(line)) };
}

/** The process's one pretty stdout, made on first use and shared by every logger. */
let prettyStdout: pino.DestinationStream | undefined;
const sharedPrettyStdout = () =>
  (prettyStdout ??= prettyDestination(pino.destination({ dest: 1, sync: true }), process.stdout.isTTY === true && !process.env.NO_COLOR));

/**
 * Logger for one service; every line carries the level by name (`"level":"info"`), an ISO 8601 time, the
 * service name, and with tracing on, the trace and span ids of the call being served (`trace_id`, `span_id`),
 * so log collectors and people read the same fields without pino's numeric levels and epoch milliseconds.
 * Lines go to stdout in the process's `logFormat()`; to `destination` when one is given (as JSON unless
 * `format` says otherwise: a caller passing its own stream usually reads the lines back).
 */
export function createLogger(service: string, level = 'info', destination?: pino.DestinationStream, format?: LogFormat): Logger {
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
  if (destination) return pino(options, format === 'pretty' ? prettyDestination(destination) : destination);
  return (format ?? logFormat()) === 'pretty' ? pino(options, sharedPrettyStdout()) : pino(options);
}
