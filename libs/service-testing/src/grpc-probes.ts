import * as path from 'node:path';
import { credentials, loadPackageDefinition, type Client } from '@grpc/grpc-js';
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

/** Lists the services a server offers through gRPC server reflection (v1). */
export async function reflectedServices(address: string): Promise<string[]> {
  const root = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto');
  const def = loadSync('grpc/reflection/v1/reflection.proto', { includeDirs: [root] });
  const Reflection = (loadPackageDefinition(def) as any).grpc.reflection.v1.ServerReflection;
  const client = new Reflection(address, credentials.createInsecure());
  try {
    return await new Promise((resolve, reject) => {
      const call = client.serverReflectionInfo();
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
