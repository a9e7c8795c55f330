import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startPrivateNats, type PrivateNats } from '@platform/testing';
import { startDemoSeed, type DemoManifest } from '../src/demo-seed';
import { bootTestPlatform, ROOT_PASSWORD, type TestPlatform } from './harness';

/** A test platform with the demo data seeded (DEMO_SEED_MANIFEST's seed, run in-process) and its manifest. */
export interface DemoPlatform {
  t: TestPlatform;
  manifest: DemoManifest;
  /** The manifest's licensed object with license usage, resource events and usage samples. */
  usage: NonNullable<DemoManifest['usage']>;
  /** Stops the seed's simulated clusters (they stop answering resource-history requests); idempotent. */
  stopSeed(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Boots a billing-enabled platform (plus `env`) and seeds the demo into it as `npm start` does with
 * DEMO_SEED_MANIFEST, then signs the demo owner in (`t.tokens[owner]`). The bus is the process's in-process one,
 * with `bus: 'private-nats'` a NATS server of the suite's own, or with `natsUrl` a server the caller runs (and
 * shares with other platforms: each installation has its own names on it).
 */
export async function bootDemoPlatform(
  env: Record<string, string> = {},
  opts: { bus?: 'in-process' | 'private-nats'; natsUrl?: string } = {},
): Promise<DemoPlatform> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-platform-'));
  let nats: PrivateNats | undefined;
  let t: TestPlatform | undefined;
  let seed: ReturnType<typeof startDemoSeed>;
  const cleanUp = async () => {
    await seed?.stop();
    await t?.stop();
    await nats?.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (opts.bus === 'private-nats') nats = await startPrivateNats();
    const NATS_URL = opts.natsUrl ?? nats?.url ?? '';
    t = await bootTestPlatform({ BILLING_ENABLED: 'true', ...env, NATS_URL });
    const file = path.join(dir, 'demo.json');
    const said: string[] = [];
    seed = startDemoSeed(
      {
        ...env,
        NATS_URL,
        DATA_DIR: path.join(dir, 'data'),
        DEMO_SEED_MANIFEST: file,
        PLATFORM_ADMIN_USERNAME: 'root',
        PLATFORM_ADMIN_PASSWORD: ROOT_PASSWORD,
      },
      t.platform,
      (msg) => said.push(msg),
    );
    await seed!.done;
    if (!fs.existsSync(file)) throw new Error(`the demo seed wrote no manifest:\n${said.join('\n')}`);
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as DemoManifest;
    if (!manifest.usage) throw new Error(`the demo manifest has no usage:\n${said.join('\n')}`);
    t.tokens[manifest.owner.username] = await t.tokenFor(manifest.owner.username, manifest.owner.password);
    const platform = t;
    return { t: platform, manifest, usage: manifest.usage, stopSeed: async () => seed?.stop(), stop: cleanUp };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}
