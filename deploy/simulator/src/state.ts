import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The simulator's state file. It HOLDS CREDENTIALS: the nkey seed of every hub the simulator enrolled, which the
 * platform answers only once, at enrollment. With it a re-run reuses those hubs (and resends: ingestion
 * absorbs the duplicates); without it a hub name already enrolled cannot be used again. Written 0600.
 */
export interface SimulatorState {
  version: 1;
  note: string;
  orgs: Record<string, OrgState>;
}

export interface OrgState {
  /** End of the simulated period of the first run, reused by later runs unless `now` is given, so they resend the same reports. */
  nowMs?: number;
  hubs: Record<string, EnrolledHub>;
}

export interface EnrolledHub {
  uid: string;
  accountID: number;
  publicKey: string;
  /** The hub's nkey seed (private key). */
  seed: string;
  /** The platform's namespace on NATS, handed out with the seed (absent in state files of older simulators). */
  namespace?: string;
}

const NOTE = 'Written by the member-cluster simulator (docs/simulator.md). Holds bus credentials (nkey seeds): keep it private.';

export function emptyState(): SimulatorState {
  return { version: 1, note: NOTE, orgs: {} };
}

/** Reads the state file; an absent file is an empty state. */
export function readState(file: string | undefined): SimulatorState {
  if (!file || !fs.existsSync(file)) return emptyState();
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as SimulatorState;
  if (parsed?.version !== 1 || typeof parsed.orgs !== 'object') throw new Error(`${file} is not a simulator state file`);
  return parsed;
}

/** Writes `text` to `file` with mode 0600, atomically (a temporary file renamed into place); creates the directory (0700). */
export function writePrivateFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  const tmp = `${path.resolve(file)}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.chmodSync(file, 0o600);
}

export function writeState(file: string | undefined, state: SimulatorState): void {
  if (file) writePrivateFile(file, `${JSON.stringify(state, null, 2)}\n`);
}
