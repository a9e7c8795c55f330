import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { APP_TOKEN_ISSUER, AppCredential, appCredential, createClient, PLATFORM_VERSION, startApp, type AppDefinition, type RunningService } from '@platform/service-kit';
import { createTestDatabase, testNatsUrl } from '@platform/testing';
import { callAsStranger, healthStatus, reflectedServices } from './grpc-probes';

/** A started app on a fresh database and the real NATS server, for integration tests. */
export interface AppUnderTest {
  running: RunningService;
  address: string;
  databaseUrl: string;
  /** The environment it was started with, to start it again the same way. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts an app the way main.ts does (its own config validation), on a fresh database and the test NATS server. */
export async function startAppForTest(app: AppDefinition<any>, env: Record<string, string> = {}): Promise<AppUnderTest> {
  const db = await createTestDatabase();
  const appEnv: Record<string, string> = {
    GRPC_PORT: '0',
    LOG_LEVEL: 'silent',
    // Key files and objects of this test only, never in the working tree.
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), `${app.name}-test-`)),
    DATABASE_URL: db.url,
    NATS_URL: await testNatsUrl(),
    ...env,
  };
  const running = await startApp(app, appEnv).catch(async (err) => {
    await db.drop();
    throw err;
  });
  return {
    running,
    address: `127.0.0.1:${running.grpcPort}`,
    databaseUrl: db.url,
    env: appEnv,
    async stop() {
      await running.stop();
      await db.drop();
    },
  };
}

/**
 * The behaviour every app shares, asserted over a real gRPC connection: it migrates its schema,
 * answers GetVersion, reports SERVING on the standard health service and offers reflection.
 */
export function describeServiceContract(opts: {
  app: AppDefinition<any>;
  schema?: string;
  grpcService: string;
  definition: unknown;
  /** Extra environment the app needs (for example another service's address, known only once tests run). */
  env?: Record<string, string> | (() => Record<string, string>);
}): void {
  describe(`${opts.app.name} service contract`, () => {
    let app: AppUnderTest;
    beforeAll(async () => {
      app = await startAppForTest(opts.app, typeof opts.env === 'function' ? opts.env() : opts.env);
    });
    afterAll(() => app?.stop());

    it('answers GetVersion with the platform version over gRPC to a platform app', async () => {
      const client = createClient(opts.definition as Record<string, never>, app.address, { name: opts.app.name });
      try {
        const res = await (client as any).getVersion({});
        expect(res).toEqual({ version: PLATFORM_VERSION, service: opts.app.name });
      } finally {
        client.close();
      }
    });

    it('reports SERVING on grpc.health.v1 for the server and its service', async () => {
      expect(await healthStatus(app.address)).toBe('SERVING');
      expect(await healthStatus(app.address, opts.grpcService)).toBe('SERVING');
    });

    it('lists its service through server reflection, to a caller with credentials only', async () => {
      expect(await reflectedServices(app.address)).toContain(opts.grpcService);
      await expect(reflectedServices(app.address, null)).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    });

    it('refuses every call without credentials, or with a forged platform credential, with UNAUTHENTICATED', async () => {
      // Our header and signature over claims of the stranger's own; and a token signed with a key of its own.
      const [header, , signature] = appCredential().token().split('.');
      const claims = Buffer.from(JSON.stringify({ sub: 'stranger', iss: APP_TOKEN_ISSUER, exp: 4_102_444_800 })).toString('base64url');
      const tampered = `${header}.${claims}.${signature}`;
      const ownKey = AppCredential.create(undefined, 'stranger').token();
      const tries: Record<string, string>[] = [
        {},
        { authorization: `Bearer ${tampered}` },
        { authorization: `Bearer ${ownKey}` },
        { authorization: 'Basic eDp5' },
      ];
      for (const metadata of tries) {
        const answer = await callAsStranger(app.address, opts.definition, 'getVersion', {}, metadata);
        expect({ metadata, code: answer.code }).toEqual({ metadata, code: status.UNAUTHENTICATED });
      }
    });

    if (opts.schema) {
      it(`migrated its own schema "${opts.schema}"`, async () => {
        const applied = await app.running.ctx.db!.knex.withSchema(opts.schema!).table('knex_migrations').select('name');
        expect(applied.map((r: { name: string }) => r.name)).toContain('20261122000000_init');
      });
    }
  });
}
