import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BUS_NAMESPACE_PATTERN } from '@platform/bus';
import { openDatabase, type Database } from '@platform/db';
import { createTestDatabase } from '@platform/testing';
import { installationOf } from './bus-readiness';

describe("the installation's id and namespace, kept in its database", () => {
  const opened: Database[] = [];
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const db of opened) await db.close();
    for (const drop of drops) await drop();
  });
  const fresh = async () => {
    const db = await createTestDatabase();
    drops.push(db.drop);
    return db.url;
  };
  const app = async (url: string, schema: string) => {
    const db = await openDatabase({ url, dataDir: os.tmpdir(), schema });
    opened.push(db);
    return db;
  };

  it('is one for every app of an installation, however many start at once, and another for another installation', async () => {
    const url = await fresh();
    const apps = await Promise.all(['clusters', 'billing', 'identity'].map((schema) => app(url, schema)));
    const seen = await Promise.all(apps.map((db) => installationOf({ DATABASE_URL: undefined, DATA_DIR: os.tmpdir() }, db)));
    expect(new Set(seen.map((s) => JSON.stringify(s))).size).toBe(1);
    expect(seen[0].busNamespace).toMatch(BUS_NAMESPACE_PATTERN);
    expect(seen[0].busNamespace).toMatch(/^platform-[0-9a-f]{12}$/);
    // The next start finds it, an app without a schema of its own too.
    expect(await installationOf({ DATABASE_URL: url, DATA_DIR: os.tmpdir() })).toEqual(seen[0]);

    const other = await installationOf({ DATABASE_URL: undefined, DATA_DIR: os.tmpdir() }, await app(await fresh(), 'clusters'));
    expect(other.id).not.toBe(seen[0].id);
    expect(other.busNamespace).not.toBe(seen[0].busNamespace);
  });

  it('is kept in the embedded database too', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'installation-'));
    try {
      const first = await installationOf({ DATABASE_URL: undefined, DATA_DIR: dataDir });
      expect(await installationOf({ DATABASE_URL: undefined, DATA_DIR: dataDir })).toEqual(first);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
