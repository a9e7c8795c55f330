import { bindService, createLogger, startGrpcServer, type CallContext, type Handlers, type RunningGrpcServer } from '@platform/service-kit';

/**
 * A stand-in for one app of the platform, as its callers reach it: a gRPC server on loopback serving every method of
 * the app's services (its client library's `*_SERVICES` table), typed by their generated definitions, as backstage's
 * `mockServices` stand in for a plugin's services. Every method answers by default (an empty message: what decoding
 * no bytes gives, every field its default; a stream of none); a test gives the answers it needs, at the start or per
 * test (`answer`), and reads what was asked (`callsTo`). Its methods' policies are the real ones: a caller without
 * the platform's credential is refused as by the app.
 */

/** One gRPC method of a generated definition, as far as a stand-in needs it. */
interface Method {
  path: string;
  responseStream?: boolean;
  responseDeserialize(bytes: Buffer): unknown;
}
/** A generated service definition: its methods by name. */
type Definition = { [method: string]: Method };
/** An app's services, by the name its clients go by (`organizations`: OrganizationsServiceService). */
export type ServiceTable = { [service: string]: object };

/** The answers a test gives, by service and method, each typed by its definition. */
export type FakeHandlers<S extends ServiceTable> = { [K in keyof S]?: Partial<Handlers<S[K]>> };

/** The request type of method `M` of service `K`. */
type RequestOf<S extends ServiceTable, K extends keyof S, M extends keyof S[K]> = Parameters<Handlers<S[K]>[M] & ((...a: any[]) => any)>[0];

/** What a test holds of a stand-in app. */
export interface FakeApp<S extends ServiceTable> {
  /** host:port, what the app's address variable is set to (ORGS_TEAMS_GRPC_ADDR=...). */
  readonly address: string;
  /** Answers `service.method` with `handler` from now on (until `reset`). */
  answer<K extends keyof S, M extends keyof S[K] & keyof Handlers<S[K]>>(service: K, method: M, handler: Handlers<S[K]>[M]): void;
  /** The requests `service.method` was called with, oldest first. */
  callsTo<K extends keyof S, M extends keyof S[K] & string>(service: K, method: M): RequestOf<S, K, M>[];
  /** Every call in the order it came: `service.method` and its request. */
  readonly calls: { method: string; request: unknown }[];
  /** Back to the answers given at the start; the calls forgotten. */
  reset(): void;
  close(): Promise<void>;
}

/** Starts a stand-in for the app `name` serving `services`, answering with `handlers` where given. */
export async function startFakeApp<S extends ServiceTable>(name: string, services: S, handlers: FakeHandlers<S> = {}): Promise<FakeApp<S>> {
  const calls: { method: string; request: unknown }[] = [];
  let overrides: Record<string, (request: unknown, ctx: CallContext) => unknown> = {};
  const given = (service: string, method: string) =>
    (handlers as Record<string, Record<string, (request: unknown, ctx: CallContext) => unknown> | undefined>)[service]?.[method];

  const bindings = Object.entries(services).map(([service, definition]) => {
    const methods = definition as Definition;
    const served = Object.fromEntries(
      Object.entries(methods).map(([method, m]) => {
        const key = `${service}.${method}`;
        const handle = (request: unknown, ctx: CallContext) => {
          calls.push({ method: key, request });
          return (overrides[key] ?? given(service, method))?.(request, ctx);
        };
        const empty = () => m.responseDeserialize(Buffer.alloc(0));
        return [
          method,
          m.responseStream
            ? async function* (request: unknown, ctx: CallContext) {
                const answer = handle(request, ctx) as AsyncIterable<unknown> | undefined;
                if (answer) yield* answer;
              }
            : async (request: unknown, ctx: CallContext) => (await handle(request, ctx)) ?? empty(),
        ];
      }),
    );
    return bindService(definition, served as Handlers<typeof definition>);
  });
  const server: RunningGrpcServer = await startGrpcServer({
    name,
    port: 0,
    host: '127.0.0.1',
    services: bindings,
    protoFiles: [],
    log: createLogger(`fake-${name}`, 'silent'),
  });
  return {
    address: `127.0.0.1:${server.port}`,
    answer(service, method, handler) {
      overrides[`${String(service)}.${String(method)}`] = handler as (request: unknown, ctx: CallContext) => unknown;
    },
    callsTo(service, method) {
      const key = `${String(service)}.${method}`;
      return calls.filter((c) => c.method === key).map((c) => c.request) as never[];
    },
    calls,
    reset() {
      overrides = {};
      calls.length = 0;
    },
    close: () => server.shutdown(100),
  };
}
