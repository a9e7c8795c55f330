import * as fs from 'node:fs';
import * as path from 'node:path';
import { status as Status, type Server, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { ReflectionService } from '@grpc/reflection';

type Registration = { definition: ServiceDefinition; implementation: UntypedServiceImplementation };

/**
 * gRPC server reflection (v1 and v1alpha) of `protoFiles`, offered from the start and built at its first request.
 * Building it parses every .proto file and indexes their descriptors: about 0.2 s of CPU for orgs-teams' twelve
 * files, which every start paid (once per app in `npm start`'s one process, once per app a test starts) for a
 * service only grpcurl and other debugging clients ask. A file that is missing still fails the start, as before.
 */
export function addReflection(server: Pick<Server, 'addService'>, protoFiles: string[], includeDir: string): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded by a serving process only (grpc-server.ts) */
  const { loadSync } = require('@grpc/proto-loader') as typeof import('@grpc/proto-loader');
  const { ReflectionService: Reflection } = require('@grpc/reflection') as typeof import('@grpc/reflection');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const missing = protoFiles.filter((file) => !fs.existsSync(path.resolve(includeDir, file)));
  if (missing.length) throw new Error(`the .proto files offered through reflection are missing under ${includeDir}: ${missing.join(', ')}`);
  let built: Map<string, UntypedServiceImplementation> | undefined;
  const implementationOf = (service: string) => {
    built ??= new Map(
      registrations(new Reflection(loadSync(protoFiles, { includeDirs: [includeDir] }))).map((r) => [serviceOf(r), r.implementation]),
    );
    return built.get(service)!;
  };
  // The services' definitions come from a reflection of nothing, made once a process: it costs little, but loads the
  // reflection protocol's own .proto files, for each server that asked.
  emptyReflection ??= registrations(new Reflection({}));
  for (const registration of emptyReflection) {
    const service = serviceOf(registration);
    const lazy: UntypedServiceImplementation = {};
    for (const method of Object.keys(registration.implementation)) {
      lazy[method] = (call: { emit(event: 'error', err: object): void }, ...rest: unknown[]) => {
        let implementation: UntypedServiceImplementation;
        try {
          implementation = implementationOf(service);
        } catch (err) {
          call.emit('error', { code: Status.INTERNAL, details: `reflection is not available: ${(err as Error).message}` });
          return;
        }
        (implementation[method] as (...args: unknown[]) => void)(call, ...rest);
      };
    }
    server.addService(registration.definition, lazy);
  }
}

/** The definitions of the reflection services (v1 and v1alpha), the same for every server. */
let emptyReflection: Registration[] | undefined;

/** What a reflection service registers on a server, caught instead of registered. */
function registrations(reflection: ReflectionService): Registration[] {
  const found: Registration[] = [];
  reflection.addToServer({ addService: (definition, implementation) => void found.push({ definition, implementation }) });
  return found;
}

/** The service a registration serves, from its first method's path (`/grpc.reflection.v1.ServerReflection/...`). */
const serviceOf = ({ definition }: Registration) => Object.values(definition)[0].path.split('/')[1];
