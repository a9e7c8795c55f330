import { EXIT, type CliIo } from '../io';
import { readArchive } from './archive';
import { fetchArchive } from './destination';
import { keyOf } from './keys';
import type { Manifest, Summary } from './manifest';

/**
 * `backup-info <file>`: reads the whole archive (so a damaged one is found now, not on the day of a restore) and
 * prints its manifest and summary as JSON; with --show-keys also the settings it keeps (SECRETS_ENCRYPTION_KEY,
 * LICENSE_CA_*), as NAME=value lines for a Secret.
 */
export async function backupInfo(
  file: string,
  opts: { passphraseFile?: string; passphraseStdin?: boolean; identity?: string[]; showKeys?: boolean },
  io: CliIo,
): Promise<number> {
  const key = await keyOf(opts, io);
  let manifest: Manifest | undefined;
  let summary: Summary | undefined;
  let settings: Record<string, string> = {};
  const files: Record<string, string> = {};
  const fetched = await fetchArchive(file, io.env, io.err);
  try {
    await readEntries(fetched.file);
  } finally {
    fetched.release();
  }
  if (opts.showKeys) {
    for (const [k, v] of Object.entries({ ...files, ...settings })) io.out(`${k}=${JSON.stringify(v)}\n`);
  } else {
    io.out(`${JSON.stringify({ manifest, summary, complete: summary !== undefined }, null, 2)}\n`);
  }
  return summary ? EXIT.ok : 65;

  async function readEntries(source: string) {
    await readArchive(source, key, async (entry) => {
      if (entry.name === 'manifest.json') manifest = JSON.parse((await entry.read()).toString('utf8'));
      else if (entry.name === 'summary.json') summary = JSON.parse((await entry.read()).toString('utf8'));
      else if (entry.name === 'keys/settings.json') settings = JSON.parse((await entry.read()).toString('utf8'));
      else if (entry.name === 'datadir/secrets/encryption.key') files.SECRETS_ENCRYPTION_KEY = (await entry.read()).toString('utf8').trim();
      else if (entry.name === 'datadir/object-storage/signing-key')
        files.OBJECT_STORAGE_SIGNING_KEY = (await entry.read()).toString('utf8').trim();
    });
  }
}
