import { InputError } from '@platform/errors';
import { usageReportV1 } from '@platform/proto';
import { metricsText } from '@platform/telemetry';
import { eventually } from '@platform/testing';
import { createClient, type PromiseClient } from './grpc-client';
import { startGrpcServer, type RunningGrpcServer } from './grpc-server';
import { bindService } from './service-binding';
import { createLogger } from './logger';

// UsageReportService's GetUsageView answers a stream (pieces of a view's JSON text): the subject here, with a
// handler of the test's own.
const Service = usageReportV1.UsageReportServiceService;
type Chunk = usageReportV1.UsageViewChunk;

const PIECE = 64 * 1024;
const piece = (i: number) => ({ json: Buffer.alloc(PIECE, 97 + (i % 26)) });

// Over both transports, as grpc.test.ts: the network (separate processes) and the in-process call (npm start).
describe.each([
  ['the network', false],
  ['in process', true],
])('a gRPC method answering a stream, through the service kit, over %s', (_transport, inProcess) => {
  let server: RunningGrpcServer;
  let client: PromiseClient<typeof Service>;
  /** What the handler does for the next call. */
  let handler: (req: usageReportV1.UsageViewRequest) => AsyncIterable<Chunk>;
  const unused = async () => {
    throw new Error('not used here');
  };

  beforeAll(async () => {
    server = await startGrpcServer({
      name: 'streamer',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(Service, {
          getUsageView: (req) => handler(req),
          generatedMonths: unused,
          getObjectQuotaHistory: unused,
          getNamespaceBilling: () => handler(usageReportV1.UsageViewRequest.create()),
        }),
      ],
      protoFiles: ['platformadmin/billingdashboard/v1/usage_report.proto'],
      log: createLogger('streamer', 'silent'),
    });
    client = createClient(Service, `127.0.0.1:${server.port}`, { name: 'streamer', inProcess });
  });
  afterAll(async () => {
    client.close();
    await server.shutdown(100);
  });

  const request = () => usageReportV1.UsageViewRequest.create({ product: 'productdb' });

  it('carries an answer many times the 4 MiB message limit, every piece in order', async () => {
    const count = 300; // 19 MiB
    handler = async function* () {
      for (let i = 0; i < count; i++) yield piece(i);
    };
    let got = 0;
    // The answer's size is the point, not its speed: a deadline no loaded machine runs into.
    for await (const { json } of client.getUsageView(request(), { deadlineMs: 120_000 })) {
      expect([json.length, json[0]]).toEqual([PIECE, 97 + (got % 26)]);
      got++;
    }
    expect(got).toBe(count);
  });

  it('asks the handler for more only as the reader takes them: a slow reader holds the handler back', async () => {
    let made = 0;
    handler = async function* () {
      for (let i = 0; i < 1_000; i++) {
        made++;
        yield piece(i);
      }
    };
    const stream = client.getUsageView(request())[Symbol.asyncIterator]();
    await stream.next();
    await new Promise((r) => setTimeout(r, 500));
    // A few megabytes of flow-control windows and socket buffers at most, not the 64 MiB the handler would make.
    expect(made).toBeLessThan(200);
    await stream.return?.();
  });

  it('ends the handler when the reader stops early', async () => {
    let ended = false;
    handler = async function* () {
      try {
        for (let i = 0; ; i++) yield piece(i);
      } finally {
        ended = true;
      }
    };
    for await (const _ of client.getUsageView(request())) break;
    await eventually(async () => ended, 5_000);
  });

  it("answers a failure before the first piece as the handler's error (400 here)", async () => {
    handler = async function* () {
      throw new InputError('unknown view nope');
    };
    const read = async () => {
      for await (const _ of client.getUsageView(request()));
    };
    await expect(read()).rejects.toMatchObject({ kind: 'input', message: 'unknown view nope' });
  });

  it('refuses a caller without the platform credential before the handler runs', async () => {
    let ran = false;
    handler = async function* () {
      ran = true;
      yield piece(0);
    };
    const read = async () => {
      for await (const _ of client.getUsageView(request(), { metadata: { authorization: 'Bearer not-a-token' } }));
    };
    // This server admits platform apps only (no service-account access configured).
    await expect(read()).rejects.toMatchObject({ message: 'service-account credentials cannot be checked here' });
    expect(ran).toBe(false);
  });

  it('counts streams as server_stream calls on both sides', async () => {
    handler = async function* () {
      yield piece(0);
    };
    for await (const _ of client.getUsageView(request()));
    const text = (await metricsText()).body;
    const method = 'grpc_service="platformadmin.billingdashboard.v1.UsageReportService",grpc_method="GetUsageView"';
    expect(text).toMatch(new RegExp(`grpc_server_handled_total\\{grpc_type="server_stream",${method},grpc_code="OK"\\} [1-9]`));
    expect(text).toMatch(new RegExp(`grpc_client_handled_total\\{grpc_type="server_stream",${method},grpc_code="OK"\\} [1-9]`));
  });
});
