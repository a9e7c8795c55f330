import { Writable } from 'node:stream';

/** One line of a JSON logger (pino's): its level (a number, or its name where the logger names it), message and fields. */
export type LogEntry = { level: number | string; msg: string } & Record<string, unknown>;

/**
 * A stream for a logger under test to write to (`pino({ level }, lines.stream)`): it keeps every line written, as
 * text, and for a JSON logger as entries, and tells a test when a line it waits for is written.
 */
export class LogLines {
  /** Every line written, in order, without its newline. */
  readonly text: string[] = [];
  private readonly waiting = new Set<{ matches: (entry: LogEntry) => boolean; resolve: (entry: LogEntry) => void }>();

  readonly stream = new Writable({
    write: (chunk, _encoding, done) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) this.add(line);
      done();
    },
  });

  /** Every line written, parsed: the logger must write JSON. */
  get entries(): LogEntry[] {
    return this.text.map((line) => JSON.parse(line) as LogEntry);
  }

  /** The first entry that `matches`, written already or once it is. */
  first(matches: (entry: LogEntry) => boolean): Promise<LogEntry> {
    const found = this.entries.find(matches);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiting.add({ matches, resolve }));
  }

  private add(line: string): void {
    this.text.push(line);
    if (this.waiting.size === 0) return;
    const entry = JSON.parse(line) as LogEntry;
    for (const waiter of this.waiting) {
      if (!waiter.matches(entry)) continue;
      this.waiting.delete(waiter);
      waiter.resolve(entry);
    }
  }
}
