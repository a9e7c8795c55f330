import { EventEmitter } from 'node:events';

/**
 * gRPC servers of this process, by port, so that a client in the same process (the one-process launcher of
 * `npm start`, where every app shares one process) calls them without a socket, HTTP/2 framing or a
 * loopback round trip. The call still goes through the generated encode and decode on both sides, the
 * server's field limits, its error mapping and the message-size limits, so the contract is exercised
 * exactly as over the network; only the transport is skipped. A server that stops is removed first, so
 * its clients fall back to the network and see it unavailable, as they would in separate processes. The caller of an
 * in-process call is this process's app: a call that presents a credential of its own goes over the network, where
 * the server checks it (grpc-client.ts).
 */

/**
 * What a served method does with an encoded request: answers the encoded response, or rejects with a gRPC status;
 * a method answering a stream yields the encoded messages as the caller asks for them.
 */
export type LocalMethod = (request: Buffer, call: LocalCall) => Promise<Buffer>;
export type LocalStreamMethod = (request: Buffer, call: LocalCall) => AsyncIterable<Buffer>;
type Served = LocalMethod | LocalStreamMethod;

/** The in-process call as the server sees it: who asked, until when, and whether the caller gave up. */
export class LocalCall extends EventEmitter {
  cancelled = false;

  constructor(
    readonly requestId: string,
    readonly deadline: Date | undefined,
  ) {
    super();
  }

  /** The caller stopped waiting (deadline or cancellation): the handler's signal aborts. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit('cancelled');
  }
}

const servers = new Map<number, Map<string, Served>>();
const LOOPBACK = /^(127\.0\.0\.1|localhost|\[::1\]|::1):(\d+)$/;

/** Offers a server's methods (by path, "/pkg.Service/Method") to clients of this process. */
export function serveLocally(port: number, methods: Map<string, Served>): void {
  servers.set(port, methods);
}

/** Takes a stopping server away: its clients go through the network again. */
export function stopServingLocally(port: number, methods: Map<string, Served>): void {
  if (servers.get(port) === methods) servers.delete(port);
}

/** `GRPC_IN_PROCESS=false` sends every call through the network, as separate processes would (benchmarks, tests). */
const DISABLED = process.env.GRPC_IN_PROCESS === 'false';

/** The in-process method behind a loopback address, when this process serves it (a stream's, for a streaming path). */
export function localMethod<M extends Served = LocalMethod>(address: string, path: string): M | undefined {
  if (DISABLED || servers.size === 0) return undefined;
  const m = LOOPBACK.exec(address);
  return m ? (servers.get(Number(m[2]))?.get(path) as M | undefined) : undefined;
}
