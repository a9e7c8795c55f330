import * as path from 'node:path';
import { credentials, loadPackageDefinition, makeGenericClientConstructor, Metadata, type Client, type ServiceDefinition, type ServiceError } from '@grpc/grpc-js';
import { appCredential } from '@platform/service-kit';
import { loadSync } from '@grpc/proto-loader';

type Callback = (err: Error | null, res: any) => void;

/** Asks a server's grpc.health.v1 service for the status of `service` ("" = the whole server). */
export async function healthStatus(address: string, service = ''): Promise<string> {
  const def = loadSync(path.join(path.dirname(require.resolve('grpc-health-check/package.json')), 'proto/health/v1/health.proto'), {
    enums: String,
  });
  const Health = (loadPackageDefinition(def) as any).grpc.health.v1.Health;
  const client: Client & { check(req: object, cb: Callback): void } = new Health(address, credentials.createInsecure());
  try {
    return await new Promise((resolve, reject) =>
      client.check({ service }, (err, res) => (err ? reject(err) : resolve(res.status as string))),
    );
  } finally {
    client.close();
  }
}

/**
 * Lists the services a server offers through gRPC server reflection (v1), asking with the given bearer token
 * (default: this process's platform-app credential; `null`: none).
 */
export async function reflectedServices(address: string, token: string | null = appCredential().token()): Promise<string[]> {
  const root = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto');
  const def = loadSync('grpc/reflection/v1/reflection.proto', { includeDirs: [root] });
  const Reflection = (loadPackageDefinition(def) as any).grpc.reflection.v1.ServerReflection;
  const client = new Reflection(address, credentials.createInsecure());
  try {
    return await new Promise((resolve, reject) => {
      const metadata = new Metadata();
      if (token !== null) metadata.set('authorization', `Bearer ${token}`);
      const call = client.serverReflectionInfo(metadata);
      call.on('data', (res: any) => {
        resolve(res.listServicesResponse.service.map((s: { name: string }) => s.name));
        call.end();
      });
      call.on('error', reject);
      call.write({ listServices: '' });
    });
  } finally {
    client.close();
  }
}

/**
 * Calls one unary method over the network exactly as a stranger would: with the given metadata only (none by
 * default), never this process's credential. Answers the status code and details (0 for OK).
 */
export async function callAsStranger(
  address: string,
  definition: unknown,
  method: string,
  request: unknown,
  metadata: Record<string, string> = {},
): Promise<{ code: number; details: string; response?: unknown }> {
  const Ctor = makeGenericClientConstructor(definition as ServiceDefinition, 'Stranger');
  const client = new Ctor(address, credentials.createInsecure()) as Client & Record<string, Function>;
  const md = new Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  try {
    return await new Promise((resolve) =>
      client[method](request, md, { deadline: Date.now() + 5_000 }, (err: ServiceError | null, response: unknown) =>
        resolve(err ? { code: err.code, details: err.details } : { code: 0, details: '', response }),
      ),
    );
  } finally {
    client.close();
  }
}
