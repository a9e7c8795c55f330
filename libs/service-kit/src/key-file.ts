import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/**
 * A secret generated once and kept in `file` (mode 0600), for the embedded defaults: the first process to
 * create it wins (a hard link never overwrites) and every other one reads it, so restarts and concurrent
 * starts agree. `make` produces the text of a new key.
 */
export async function keyFromFile(file: string, make: () => string): Promise<string> {
  const existing = await readKey(file);
  if (existing) return existing;
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await fs.writeFile(tmp, `${make()}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await fs.link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
  const key = await readKey(file);
  if (!key) throw new Error(`${file} is empty`);
  return key;
}

async function readKey(file: string): Promise<string | undefined> {
  try {
    return (await fs.readFile(file, 'utf8')).trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
