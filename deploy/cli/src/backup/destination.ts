import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as S3 from '@aws-sdk/client-s3';
import { z } from 'zod';
import { boolVar, ConfigError, loadConfig } from '@platform/service-kit';
import { CliError, EXIT } from '../io';

/**
 * Where scheduled backups go (`backup --to`): a directory (a mounted volume) or an S3-compatible bucket under a
 * prefix. Archives made there are named `platform-<UTC time>.age`, so they sort by age and retention (`--keep`,
 * `--keep-days`) only ever deletes files of that name, never anything else kept beside them.
 */
export interface Destination {
  /** For messages: the directory, or s3://bucket/prefix. */
  where: string;
  /** Writes the finished archive `file` there as `name`; answers where it went. */
  store(file: string, name: string): Promise<string>;
  /** The archives made by `backup --to` found there, oldest first. */
  list(): Promise<Archived[]>;
  remove(name: string): Promise<void>;
  close(): void;
}

export interface Archived {
  name: string;
  at: Date;
}

const NAME = /^platform-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})Z\.age$/;

/** `platform-2026-11-25T03-00-00.000Z.age`: the time the backup began, sortable, safe in any file system or key. */
export function archiveName(at: Date): string {
  return `platform-${at.toISOString().replace(/:/g, '-')}.age`;
}

/** The time in an archive's name, or undefined when it is not one `backup --to` made. */
export function archiveTime(name: string): Date | undefined {
  const m = NAME.exec(name);
  if (!m) return undefined;
  const at = new Date(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** An `s3://bucket/prefix` location, split. */
export interface S3Location {
  bucket: string;
  /** Without leading or trailing slash; '' for the bucket's root. */
  prefix: string;
}

export function parseS3(location: string): S3Location | undefined {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(location);
  if (!m) return undefined;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(m[1])) throw new CliError(`${location}: ${m[1]} is not an S3 bucket name`, 64);
  return { bucket: m[1], prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

/** The bucket's endpoint and credentials, apart from the object store's: backups belong in another bucket, often another account. */
export const backupS3Env = {
  /** S3 endpoint (MinIO, Ceph, ...); unset: AWS S3 of BACKUP_S3_REGION. */
  BACKUP_S3_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  BACKUP_S3_REGION: z.string().default('us-east-1'),
  /** Static credentials (both or neither; neither: the AWS SDK's default chain, e.g. AWS_* variables or web identity). */
  BACKUP_S3_ACCESS_KEY_ID: z.string().optional(),
  BACKUP_S3_SECRET_ACCESS_KEY: z.string().optional(),
  BACKUP_S3_FORCE_PATH_STYLE: boolVar.default(true),
};

/** S3's limit of one PUT; a larger archive would need a multipart upload. */
const MAX_PUT_BYTES = 5 * 1024 ** 3;

export function s3Client(env: NodeJS.ProcessEnv): { client: S3.S3Client; sdk: typeof S3 } {
  const config = loadConfig(backupS3Env, env);
  if (!!config.BACKUP_S3_ACCESS_KEY_ID !== !!config.BACKUP_S3_SECRET_ACCESS_KEY) {
    throw new ConfigError(['BACKUP_S3_ACCESS_KEY_ID and BACKUP_S3_SECRET_ACCESS_KEY go together']);
  }
  // Loaded only for a bucket, as the object store does.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk: typeof S3 = require('@aws-sdk/client-s3');
  const client = new sdk.S3Client({
    endpoint: config.BACKUP_S3_ENDPOINT,
    region: config.BACKUP_S3_REGION,
    forcePathStyle: config.BACKUP_S3_FORCE_PATH_STYLE,
    credentials:
      config.BACKUP_S3_ACCESS_KEY_ID && config.BACKUP_S3_SECRET_ACCESS_KEY
        ? { accessKeyId: config.BACKUP_S3_ACCESS_KEY_ID, secretAccessKey: config.BACKUP_S3_SECRET_ACCESS_KEY }
        : undefined,
    // Checksums only where S3 requires them: several S3-compatible stores reject the SDK's default CRC headers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
  return { client, sdk };
}

/** A failed S3 call as one line: the bucket cannot be used (exit 69). */
export function s3Failure(what: string, err: unknown): CliError {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  return new CliError(
    `${what}: ${e.name ?? 'error'}${status ? ` (HTTP ${status})` : ''}: ${(e.message ?? String(err)).split('\n')[0]}`,
    EXIT.unavailable,
  );
}

export function openDestination(to: string, env: NodeJS.ProcessEnv): Destination {
  const s3 = parseS3(to);
  return s3 ? bucketDestination(s3, env) : directoryDestination(to);
}

function directoryDestination(dir: string): Destination {
  const root = path.resolve(dir);
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) throw new CliError(`--to ${root}: no such directory`, 66);
  return {
    where: root,
    async store(file, name) {
      // The archive was written in place (backup writes into the directory itself): nothing to move.
      const target = path.join(root, name);
      if (path.resolve(file) !== target) await fs.promises.rename(file, target);
      return target;
    },
    async list() {
      return sorted((await fs.promises.readdir(root)).map((name) => ({ name, at: archiveTime(name) })));
    },
    async remove(name) {
      await fs.promises.rm(path.join(root, name), { force: true });
    },
    close() {},
  };
}

function bucketDestination(location: S3Location, env: NodeJS.ProcessEnv): Destination {
  const { client, sdk } = s3Client(env);
  const keyOf = (name: string) => (location.prefix ? `${location.prefix}/${name}` : name);
  const where = `s3://${location.bucket}${location.prefix ? `/${location.prefix}` : ''}`;
  return {
    where,
    async store(file, name) {
      const { size } = await fs.promises.stat(file);
      if (size > MAX_PUT_BYTES)
        throw new CliError(`the archive is ${size} bytes, more than one S3 upload takes (5 GiB): write it to a volume instead`);
      try {
        await client.send(
          new sdk.PutObjectCommand({
            Bucket: location.bucket,
            Key: keyOf(name),
            Body: fs.createReadStream(file),
            ContentLength: size,
            ContentType: 'application/octet-stream',
          }),
        );
      } catch (err) {
        throw s3Failure(`cannot upload the archive to ${where}`, err);
      }
      return `${where}/${name}`;
    },
    async list() {
      return sorted((await listKeys(client, sdk, location)).map((name) => ({ name, at: archiveTime(name) })));
    },
    async remove(name) {
      try {
        await client.send(new sdk.DeleteObjectCommand({ Bucket: location.bucket, Key: keyOf(name) }));
      } catch (err) {
        throw s3Failure(`cannot delete ${where}/${name}`, err);
      }
    },
    close: () => client.destroy(),
  };
}

/** The names (keys less the prefix) directly under the location's prefix. */
async function listKeys(client: S3.S3Client, sdk: typeof S3, location: S3Location): Promise<string[]> {
  const prefix = location.prefix ? `${location.prefix}/` : '';
  const names: string[] = [];
  let token: string | undefined;
  try {
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({ Bucket: location.bucket, Prefix: prefix, Delimiter: '/', ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key) names.push(o.Key.slice(prefix.length));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (err) {
    throw s3Failure(`cannot list s3://${location.bucket}/${prefix}`, err);
  }
  return names;
}

const sorted = (found: { name: string; at: Date | undefined }[]): Archived[] =>
  found.filter((a): a is Archived => a.at !== undefined).sort((x, y) => x.at.getTime() - y.at.getTime());

export interface Retention {
  /** Keep the newest N archives. */
  keep?: number;
  /** Delete archives older than this many days. */
  keepDays?: number;
}

/**
 * Applies retention after a backup succeeded: an archive goes when it is not among the newest `keep` or is older
 * than `keepDays`; the one just written (`current`) always stays. Answers the names deleted.
 */
export async function applyRetention(destination: Destination, retention: Retention, current: string, now: Date): Promise<string[]> {
  if (retention.keep === undefined && retention.keepDays === undefined) return [];
  const archives = await destination.list();
  const newest = retention.keep === undefined ? archives : archives.slice(-retention.keep);
  const cutoff = retention.keepDays === undefined ? undefined : now.getTime() - retention.keepDays * 86400_000;
  const doomed = archives.filter((a) => a.name !== current && (!newest.includes(a) || (cutoff !== undefined && a.at.getTime() < cutoff)));
  for (const a of doomed) await destination.remove(a.name);
  return doomed.map((a) => a.name);
}

/**
 * An archive to read (restore, backup-info): a file, or `s3://bucket/key`, downloaded to a private temporary file
 * first (the archive is read twice: checked whole, then restored). `s3://bucket/prefix/` (a trailing slash) is the
 * newest archive `backup --to` made there. `release` removes the download.
 */
export async function fetchArchive(
  location: string,
  env: NodeJS.ProcessEnv,
  log: (s: string) => void,
): Promise<{ file: string; release(): void }> {
  const s3 = parseS3(location);
  if (!s3) return { file: path.resolve(location), release() {} };
  const { client, sdk } = s3Client(env);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-restore-'));
  const release = () => fs.rmSync(tmp, { recursive: true, force: true });
  try {
    let key = s3.prefix;
    if (location.endsWith('/') || key === '') {
      const archives = sorted((await listKeys(client, sdk, s3)).map((name) => ({ name, at: archiveTime(name) })));
      if (archives.length === 0) throw new CliError(`${location}: no archive (platform-<time>.age) there`, 66);
      key = s3.prefix ? `${s3.prefix}/${archives.at(-1)!.name}` : archives.at(-1)!.name;
    }
    const file = path.join(tmp, path.basename(key));
    log(`downloading s3://${s3.bucket}/${key}\n`);
    let body: S3.GetObjectCommandOutput['Body'];
    try {
      body = (await client.send(new sdk.GetObjectCommand({ Bucket: s3.bucket, Key: key }))).Body;
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchKey') throw new CliError(`s3://${s3.bucket}/${key} does not exist`, 66);
      throw s3Failure(`cannot download s3://${s3.bucket}/${key}`, err);
    }
    const { pipeline } = await import('node:stream/promises');
    await pipeline(body as NodeJS.ReadableStream, fs.createWriteStream(file, { mode: 0o600 }));
    return { file, release };
  } catch (err) {
    release();
    throw err;
  } finally {
    client.destroy();
  }
}
