/** What a command reads and writes; the process's own streams in main.ts, captured ones in tests. */
export interface CliIo {
  /** The environment the configuration is read from (the same variables the apps read). */
  env: NodeJS.ProcessEnv;
  /** Results: a generated password, a token, the configuration, check lines. */
  out(text: string): void;
  /** Everything else: what was done, notes, errors. */
  err(text: string): void;
  /** The whole of standard input (for --password-stdin). */
  readStdin(): Promise<string>;
}

/**
 * Exit codes (sysexits where one fits), documented in docs/operations.md.
 */
export const EXIT = {
  ok: 0,
  /** The command could not do what was asked: no such user, a name taken, a password too short. */
  failed: 1,
  /** Wrong arguments: an unknown command or option, a missing value. */
  usage: 64,
  /** A dependency cannot be used: the database, OpenFGA, NATS; `check` found one down. */
  unavailable: 69,
  /** A fault in the CLI itself. */
  software: 70,
  /** The embedded database is in use by a running platform: stop it first. */
  inUse: 75,
  /** The configuration is invalid (a variable named in the message). */
  config: 78,
} as const;

/** A failure the CLI reports as one line, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
