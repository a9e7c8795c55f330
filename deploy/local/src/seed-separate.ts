import * as fs from 'node:fs';
import { openDatabase } from '@platform/db';
import { useAppKeys } from '@platform/service-kit';
import { startDemoSeed } from './demo-seed';
import type { LocalPlatform } from './platform';

/**
 * The demo seed against a platform that runs as separate processes (the HTTP benchmark's chart topology), where no
 * launcher runs it: PLATFORM_URL (the gateway), CLUSTERS_GRPC_PORT (clusters on loopback), DATABASE_URL (billing's
 * schema, which the seed watches for its reports to be applied), NATS_URL, DATA_DIR, PLATFORM_ADMIN_USERNAME and
 * PLATFORM_ADMIN_PASSWORD, PLATFORM_APP_KEYS (the seed asks clusters over gRPC as one of the release's apps),
 * DEMO_SEED_MANIFEST. Once the manifest is written it keeps the simulated hub running until SIGTERM, then exits 0;
 * it exits 1 when the seed fails.
 */
async function main(): Promise<number> {
  const env = process.env;
  useAppKeys(env.PLATFORM_APP_KEYS?.split(','), 'platform');
  const db = await openDatabase({ url: env.DATABASE_URL!, dataDir: '', schema: 'billing' });
  // What the seed asks of the launcher's platform: its URL, clusters' gRPC port, billing-dashboard's database.
  const platform = {
    url: env.PLATFORM_URL!,
    apps: new Map<string, unknown>([
      ['clusters', { grpcPort: Number(env.CLUSTERS_GRPC_PORT) }],
      ['billing-dashboard', { ctx: { db } }],
    ]),
  } as unknown as LocalPlatform;
  const seed = startDemoSeed(env, platform, (msg) => process.stderr.write(`[seed] ${msg}\n`));
  if (!seed) throw new Error('DEMO_SEED_MANIFEST is not set');
  try {
    await seed.done;
    // The seed says why it failed and leaves no manifest; its promise does not reject.
    if (!fs.existsSync(env.DEMO_SEED_MANIFEST!)) return 1;
    // The simulated hub goes on answering what the platform asks it live (a product's resource history), as under
    // npm start, until this process is told to stop.
    await new Promise((resolve) => process.once('SIGTERM', resolve));
    return 0;
  } finally {
    await seed.stop();
    await db.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[seed] ${(err as Error).message}\n`);
    process.exit(1);
  },
);
