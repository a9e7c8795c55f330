import * as path from 'node:path';
import { credentials, loadPackageDefinition, Server, ServerCredentials } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { PROTO_ROOT, protoFilesOf } from '@platform/proto';
import { addReflection } from './reflection';

/** One reflection request over `version` (v1 or v1alpha) of the reflection service; its first answer. */
async function ask(address: string, version: 'v1' | 'v1alpha', request: object): Promise<any> {
  const root = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto');
  const def = loadSync(`grpc/reflection/${version}/reflection.proto`, { includeDirs: [root] });
  const Reflection = (loadPackageDefinition(def) as any).grpc.reflection[version].ServerReflection;
  const client = new Reflection(address, credentials.createInsecure());
  try {
    return await new Promise((resolve, reject) => {
      const call = client.serverReflectionInfo();
      call.on('data', (answer: unknown) => {
        resolve(answer);
        call.end();
      });
      call.on('error', reject);
      call.write(request);
    });
  } finally {
    client.close();
  }
}

// Reflection is built at its first request rather than at the start: what it answers must be what it answered when
// it was built up front, in both versions of the protocol.
describe('server reflection, built when first asked', () => {
  const server = new Server();
  let address = '';
  beforeAll(async () => {
    addReflection(server, protoFilesOf('orgsteams'), PROTO_ROOT);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    address = `127.0.0.1:${port}`;
  });
  afterAll(() => server.forceShutdown());

  it("lists the services of the server's .proto files, in v1 and v1alpha", async () => {
    for (const version of ['v1', 'v1alpha'] as const) {
      const answer = await ask(address, version, { listServices: '' });
      expect(answer.listServicesResponse.service.map((s: { name: string }) => s.name)).toContain(
        'platformadmin.orgsteams.v1.OrgsTeamsService',
      );
    }
  });

  it('answers the file that declares a symbol, and an error for an unknown one', async () => {
    const found = await ask(address, 'v1', { fileContainingSymbol: 'platformadmin.orgsteams.v1.OrgsTeamsService' });
    expect(found.fileDescriptorResponse.fileDescriptorProto.length).toBeGreaterThan(0);
    const unknown = await ask(address, 'v1', { fileContainingSymbol: 'platformadmin.orgsteams.v1.NoSuchService' });
    expect(unknown.errorResponse.errorCode).toBe(5); // NOT_FOUND
  });

  it("answers on each server of a process with that server's own files", async () => {
    const other = new Server();
    addReflection(other, protoFilesOf('authz'), PROTO_ROOT);
    const port = await new Promise<number>((resolve, reject) =>
      other.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    try {
      const names = async (at: string) =>
        (await ask(at, 'v1', { listServices: '' })).listServicesResponse.service.map((s: { name: string }) => s.name);
      expect(await names(`127.0.0.1:${port}`)).toContain('platformadmin.authz.v1.AuthzService');
      expect(await names(`127.0.0.1:${port}`)).not.toContain('platformadmin.orgsteams.v1.OrgsTeamsService');
      expect(await names(address)).toContain('platformadmin.orgsteams.v1.OrgsTeamsService');
    } finally {
      other.forceShutdown();
    }
  });

  it('refuses to be offered for a .proto file that is not there', () => {
    expect(() => addReflection(new Server(), ['platformadmin/none/v1/none.proto'], PROTO_ROOT)).toThrow(/missing.*none\.proto/);
  });
});
