import * as fs from 'node:fs';
import * as path from 'node:path';
import { CliError, type CliIo } from '../io';
import type { Key, Lock } from './archive';

/**
 * Key material that lives in settings rather than under DATA_DIR (the chart keeps them in Secrets): copied into
 * the archive so it is all a restore needs.
 */
export const KEY_SETTINGS = ['SECRETS_ENCRYPTION_KEY', 'LICENSE_CA_CERT', 'LICENSE_CA_KEY', 'OBJECT_STORAGE_SIGNING_KEY'] as const;

/** Files under DATA_DIR that are not data of their own kind: the database and objects have theirs; the lock is the running process's. */
export const DATA_DIR_SKIPPED = new Set(['postgres', 'objects', 'lock']);

/** Every file under DATA_DIR a backup keeps (keys, the bootstrap password, demo-seed state), relative, sorted. */
export function dataDirFiles(dataDir: string, exclude: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const full = path.join(dir, e.name);
      if (!rel && DATA_DIR_SKIPPED.has(e.name)) continue;
      if (path.resolve(full) === exclude || /\.(tmp|partial)$/.test(e.name)) continue;
      if (e.isDirectory()) walk(full, r);
      else if (e.isFile()) out.push(r);
    }
  };
  walk(dataDir, '');
  return out.sort();
}

interface KeyOptions {
  passphraseFile?: string;
  passphraseStdin?: boolean;
  recipient?: string[];
  identity?: string[];
}

const MIN_PASSPHRASE = 12;

async function passphraseOf(opts: KeyOptions, io: CliIo): Promise<string | undefined> {
  const given = [opts.passphraseFile, opts.passphraseStdin].filter(Boolean).length;
  if (given > 1) throw new CliError('give the passphrase once: --passphrase-file or --passphrase-stdin', 64);
  let text: string | undefined;
  if (opts.passphraseFile) {
    try {
      text = fs.readFileSync(opts.passphraseFile, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read the passphrase file ${opts.passphraseFile}: ${(err as NodeJS.ErrnoException).code}`, 66);
    }
  } else if (opts.passphraseStdin) text = await io.readStdin();
  else text = io.env.BACKUP_PASSPHRASE || undefined;
  return text?.split(/\r?\n/)[0];
}

/** How a new archive is locked: recipients (--recipient), else a passphrase of at least 12 characters. */
export async function lockOf(opts: KeyOptions, io: CliIo): Promise<Lock> {
  const passphrase = await passphraseOf(opts, io);
  if (opts.recipient?.length) {
    if (passphrase !== undefined) throw new CliError('an archive is locked by recipients or by a passphrase, not both', 64);
    for (const r of opts.recipient) {
      if (!/^age1[0-9a-z]+$/.test(r)) throw new CliError(`--recipient ${r.slice(0, 20)}...: not an age public key (age1...)`, 64);
    }
    return { recipients: opts.recipient };
  }
  if (passphrase === undefined) {
    throw new CliError('the archive must be encrypted: give --passphrase-file, --passphrase-stdin, BACKUP_PASSPHRASE or --recipient', 64);
  }
  if (passphrase.length < MIN_PASSPHRASE) throw new CliError(`the passphrase must be at least ${MIN_PASSPHRASE} characters`, 64);
  return { passphrase };
}

/** How an archive is opened: identities (--identity files of AGE-SECRET-KEY-1... lines), else the passphrase. */
export async function keyOf(opts: KeyOptions, io: CliIo): Promise<Key> {
  if (opts.identity?.length) {
    const identities: string[] = [];
    for (const file of opts.identity) {
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (err) {
        throw new CliError(`cannot read the identity file ${file}: ${(err as NodeJS.ErrnoException).code}`, 66);
      }
      const keys = text.split(/\r?\n/).filter((l) => l.startsWith('AGE-SECRET-KEY-'));
      if (keys.length === 0) throw new CliError(`${file} holds no age identity (AGE-SECRET-KEY-1... line)`, 64);
      identities.push(...keys);
    }
    return { identities };
  }
  const passphrase = await passphraseOf(opts, io);
  if (passphrase === undefined) {
    throw new CliError('give the key of the archive: --passphrase-file, --passphrase-stdin, BACKUP_PASSPHRASE or --identity', 64);
  }
  return { passphrase };
}
