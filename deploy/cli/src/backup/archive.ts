import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ReadableStream } from 'node:stream/web';
import * as age from 'age-encryption';
import * as tar from 'tar-stream';
import { CliError } from '../io';

/**
 * A backup archive: a tar stream of entries (manifest.json first, summary.json last) encrypted as one age file
 * (https://age-encryption.org/v1: scrypt for a passphrase, X25519 for a recipient key; ChaCha20-Poly1305 in
 * 64 KiB chunks, each authenticated, the last one marked, so a changed or cut-short archive fails to decrypt).
 */

/** How the archive is locked: a passphrase, or age recipients (public keys: `age1...`). */
export type Lock = { passphrase: string } | { recipients: string[] };
/** How it is opened: the passphrase, or age identities (secret keys: `AGE-SECRET-KEY-1...`). */
export type Key = { passphrase: string } | { identities: string[] };

/**
 * The file an archive is written to until it is finished, named for its writer (`<file>.<host>-<pid>.partial`), so that
 * a later backup can tell one left by a killed writer from one still being written (removeStalePartials).
 */
export function partialOf(file: string): string {
  return `${file}.${os.hostname()}-${process.pid}.partial`;
}

const PARTIAL = /^(.*)\.([^/]+)-(\d+)\.partial$/;
/** A partial file of an archive written by a version that did not name its writer. */
const UNNAMED_PARTIAL = /\.age\.partial$/;
/** Past this, a partial file whose writer this host cannot check (another host's, or unnamed) is taken as left behind. */
const FOREIGN_PARTIAL_MS = 24 * 3600_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: a process of another user holds the number, so it lives.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes from `dir` the partial archives a killed backup left (only those of `file` when given): the ones this host's
 * dead processes wrote, and those of other hosts or older versions untouched for a day. Answers the names removed.
 */
export async function removeStalePartials(dir: string, file?: string): Promise<string[]> {
  const removed: string[] = [];
  const now = Date.now();
  for (const name of await fs.promises.readdir(dir).catch(() => [] as string[])) {
    const full = path.join(dir, name);
    const named = PARTIAL.exec(name);
    if (!named && !UNNAMED_PARTIAL.test(name)) continue;
    const archive = named ? named[1] : name.slice(0, -'.partial'.length);
    if (file !== undefined && path.join(dir, archive) !== file) continue;
    const ours = named !== null && named[2] === os.hostname();
    if (ours && alive(Number(named[3]))) continue;
    if (!ours) {
      const stat = await fs.promises.stat(full).catch(() => undefined);
      if (!stat || now - stat.mtimeMs < FOREIGN_PARTIAL_MS) continue;
    }
    await fs.promises.rm(full, { force: true });
    removed.push(name);
  }
  return removed;
}

/** Writes entries one after the other; `close` finishes the file (a partial file, partialOf, renamed into place). */
export interface ArchiveWriter {
  add(name: string, body: Buffer): Promise<void>;
  /** An entry whose bytes come from a file (a pg_dump). */
  addFile(name: string, file: string): Promise<void>;
  /** Bytes written to the file so far (encrypted). */
  written(): number;
  close(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * scrypt's cost for a passphrase, as log2 N (age's default is 18): age-encryption's scrypt is JavaScript, and
 * 2^18 takes about 15 s on a small server for each backup and restore; 2^16 (64 MiB, about 4 s) is still far
 * above the interactive-login 2^15. A recipient key costs nothing and is what scheduled backups should use.
 */
export const SCRYPT_WORK_FACTOR = 16;

export async function createArchive(file: string, lock: Lock): Promise<ArchiveWriter> {
  const encrypter = new age.Encrypter();
  if ('passphrase' in lock) {
    encrypter.setPassphrase(lock.passphrase);
    encrypter.setScryptWorkFactor(SCRYPT_WORK_FACTOR);
  } else for (const r of lock.recipients) encrypter.addRecipient(r);
  const pack = tar.pack();
  const partial = partialOf(file);
  const out = fs.createWriteStream(partial, { mode: 0o600 });
  let bytes = 0;
  const counted = async function* (source: AsyncIterable<Uint8Array>) {
    for await (const chunk of source) {
      bytes += chunk.length;
      yield chunk;
    }
  };
  const encrypted = (await encrypter.encrypt(ReadableStream.from(pack) as any)) as unknown as ReadableStream<Uint8Array>;
  const done = pipeline(Readable.fromWeb(encrypted as any), counted, out);
  done.catch(() => undefined);
  const entry = (header: Partial<tar.Header>, body?: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const stream = pack.entry(header as tar.Header, body as any, (err) => (err ? reject(err) : resolve()));
      return stream;
    });
  return {
    add: (name, body) => entry({ name, size: body.length, mode: 0o600, mtime: new Date(0) }, body),
    async addFile(name, source) {
      const { size } = await fs.promises.stat(source);
      await new Promise<void>((resolve, reject) => {
        const sink = pack.entry({ name, size, mode: 0o600, mtime: new Date(0) } as tar.Header, (err) => (err ? reject(err) : resolve()));
        fs.createReadStream(source).on('error', reject).pipe(sink as any);
      });
    },
    written: () => bytes,
    async close() {
      pack.finalize();
      await done;
      await fs.promises.rename(partial, file);
    },
    async abort() {
      pack.destroy();
      await done.catch(() => undefined);
      await fs.promises.rm(partial, { force: true });
    },
  };
}

/** An entry as read: its name and a way to read its bytes (once, before the next entry). */
export interface ArchiveEntry {
  name: string;
  size: number;
  read(): Promise<Buffer>;
  /** Copies the bytes to a file. */
  toFile(file: string): Promise<void>;
}

/**
 * Reads the archive's entries in order. A wrong passphrase or key is one clear line (exit 1); a changed or
 * truncated archive fails where the damage is (the caller has already checked the whole archive once).
 */
export async function readArchive(file: string, key: Key, onEntry: (entry: ArchiveEntry) => Promise<void>): Promise<void> {
  let input: fs.ReadStream;
  try {
    await fs.promises.access(file, fs.constants.R_OK);
    input = fs.createReadStream(file);
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 66);
  }
  const decrypter = new age.Decrypter();
  if ('passphrase' in key) decrypter.addPassphrase(key.passphrase);
  else for (const id of key.identities) decrypter.addIdentity(id);
  let plain: ReadableStream<Uint8Array>;
  try {
    plain = (await decrypter.decrypt(Readable.toWeb(input) as any)) as unknown as ReadableStream<Uint8Array>;
  } catch (err) {
    input.destroy();
    const message = (err as Error)?.message ?? String(err);
    if (/no identity matched/.test(message)) {
      throw new CliError(
        'passphrase' in key
          ? `cannot open ${file}: the passphrase is not the one it was made with`
          : `cannot open ${file}: none of the identities given is a recipient of it`,
      );
    }
    throw new CliError(`cannot open ${file}: it is not a platform backup (not an age-encrypted file: ${message.split('\n')[0]})`, 65);
  }
  const extract = tar.extract();
  const feeding = pipeline(Readable.fromWeb(plain as any), extract as any).catch((err) => {
    extract.destroy(err);
    throw err;
  });
  feeding.catch(() => undefined);
  try {
    for await (const stream of extract) {
      const header = stream.header;
      let consumed = false;
      const read = async () => {
        consumed = true;
        const chunks: Buffer[] = [];
        for await (const c of stream) chunks.push(c as Buffer);
        return Buffer.concat(chunks);
      };
      await onEntry({
        name: header.name,
        size: header.size ?? 0,
        read,
        async toFile(target) {
          consumed = true;
          await pipeline(stream as any, fs.createWriteStream(target, { mode: 0o600 }));
        },
      });
      if (!consumed) stream.resume();
    }
    await feeding;
  } catch (err) {
    input.destroy();
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${file}: it is damaged or cut short (${((err as Error)?.message ?? String(err)).split('\n')[0]})`, 65);
  }
}

