import { createVerify, generateKeyPairSync, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

// Local doubles of the two metering services the marketplace proxy calls (docs/marketplaces.md), speaking
// their documented wire formats: AWS Marketplace Metering (awsJson1_1: POST / with X-Amz-Target, SigV4
// signed) and Google Service Control v1 REST with an OAuth 2.0 JWT-bearer token endpoint.

interface Double {
  url: string;
  /** Answers the next `n` calls with 503 (the client is to retry). */
  failNext(n: number): void;
  close(): Promise<void>;
}

const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => resolve(text));
  });

async function listen(handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void) {
  const server = http.createServer((req, res) => void readBody(req).then((body) => handler(req, body, res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export interface AwsUsageRecord {
  Timestamp: number;
  CustomerAWSAccountId?: string;
  Dimension: string;
  Quantity?: number;
}

export interface AwsMeteringDouble extends Double {
  /** Every BatchMeterUsage request as received: ProductCode and its records. */
  batches: { ProductCode?: string; UsageRecords: AwsUsageRecord[] }[];
  /** MeterUsage requests as received. */
  meterUsage: Record<string, unknown>[];
  /** Authorization headers seen (SigV4). */
  authorizations: string[];
  /** Accounts answered CustomerNotSubscribed. */
  unsubscribed: Set<string>;
  /** Leaves the first record of the next `n` batches unprocessed. */
  unprocessNext(n: number): void;
  /** How the MeterUsage dry run answers: DryRunOperation (ready) or an error type. */
  dryRun: 'DryRunOperation' | 'UnauthorizedException' | 'InvalidProductCodeException';
}

/** AWS Marketplace Metering: BatchMeterUsage and MeterUsage over awsJson1_1. */
export async function startAwsMeteringDouble(): Promise<AwsMeteringDouble> {
  let failing = 0;
  let unprocessing = 0;
  const awsError = (res: http.ServerResponse, status: number, type: string, message: string) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': type });
    res.end(JSON.stringify({ __type: type, message }));
  };
  const d = {
    batches: [],
    meterUsage: [],
    authorizations: [],
    unsubscribed: new Set<string>(),
    dryRun: 'DryRunOperation',
    failNext: (n: number) => void (failing = n),
    unprocessNext: (n: number) => void (unprocessing = n),
  } as unknown as AwsMeteringDouble;
  const { server, url } = await listen((req, body, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    d.authorizations.push(String(req.headers.authorization ?? ''));
    if (req.method !== 'POST' || !String(req.headers['content-type']).startsWith('application/x-amz-json-1.1')) {
      return awsError(res, 400, 'SerializationException', 'expected POST application/x-amz-json-1.1');
    }
    if (!String(req.headers.authorization).startsWith('AWS4-HMAC-SHA256 '))
      return awsError(res, 403, 'MissingAuthenticationTokenException', 'unsigned');
    if (failing > 0) {
      failing--;
      return awsError(res, 503, 'InternalServiceErrorException', 'try again');
    }
    const input = JSON.parse(body || '{}');
    if (target === 'AWSMPMeteringService.BatchMeterUsage') {
      const records = input.UsageRecords as AwsUsageRecord[];
      if (!Array.isArray(records) || records.length === 0 || records.length > 25) {
        return awsError(res, 400, 'ValidationException', 'UsageRecords must hold 1 to 25 records');
      }
      d.batches.push(input);
      const unprocessed = unprocessing > 0 ? (unprocessing--, records.slice(0, 1)) : [];
      const results = records.slice(unprocessed.length).map((r) => ({
        UsageRecord: r,
        MeteringRecordId: randomUUID(),
        Status: d.unsubscribed.has(r.CustomerAWSAccountId ?? '') ? 'CustomerNotSubscribed' : 'Success',
      }));
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      return res.end(JSON.stringify({ Results: results, UnprocessedRecords: unprocessed }));
    }
    if (target === 'AWSMPMeteringService.MeterUsage') {
      d.meterUsage.push(input);
      if (input.DryRun) return awsError(res, 400, d.dryRun, 'dry run');
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      return res.end(JSON.stringify({ MeteringRecordId: randomUUID() }));
    }
    return awsError(res, 400, 'UnknownOperationException', target);
  });
  return Object.assign(d, { url, close: () => new Promise<void>((r) => server.close(() => r())) });
}

export interface ServiceControlDouble extends Double {
  /** `services.report` bodies received, by service name. */
  reports: { service: string; operations: Record<string, any>[] }[];
  checks: { service: string; operation: Record<string, any> }[];
  /** Tokens issued by the token endpoint. */
  tokensIssued: number;
  /** Metric names (`<service>/<dimension>`) answered with a reportError. */
  rejectMetrics: Set<string>;
  /** Consumers whose check answers a checkError. */
  blockedConsumers: Set<string>;
  /** Writes a service-account key file whose token_uri is this double's token endpoint. */
  keyFile(dir: string): string;
}

/** Google Service Control v1 (services:check, services:report) and an OAuth 2.0 token endpoint. */
export async function startServiceControlDouble(): Promise<ServiceControlDouble> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const tokens = new Set<string>();
  let failing = 0;
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const googleError = (res: http.ServerResponse, code: number, status: string, message: string) =>
    json(res, code, { error: { code, message, status } });
  const d = {
    reports: [],
    checks: [],
    tokensIssued: 0,
    rejectMetrics: new Set<string>(),
    blockedConsumers: new Set<string>(),
    failNext: (n: number) => void (failing = n),
  } as unknown as ServiceControlDouble;
  const { server, url } = await listen((req, body, res) => {
    if (req.method === 'POST' && req.url === '/token') {
      const form = new URLSearchParams(body);
      const [h, c, sig] = (form.get('assertion') ?? '').split('.');
      const valid =
        form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer' &&
        !!sig &&
        createVerify('RSA-SHA256').update(`${h}.${c}`).verify(publicKey, Buffer.from(sig, 'base64url'));
      const claims = valid ? JSON.parse(Buffer.from(c, 'base64url').toString()) : {};
      if (!valid || claims.scope !== 'https://www.googleapis.com/auth/servicecontrol' || claims.aud !== `${url}/token`) {
        return json(res, 400, { error: 'invalid_grant' });
      }
      const token = randomUUID();
      tokens.add(token);
      d.tokensIssued++;
      return json(res, 200, { access_token: token, expires_in: 3600, token_type: 'Bearer' });
    }
    const m = /^\/v1\/services\/([^/:]+):(check|report)$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !m) return googleError(res, 404, 'NOT_FOUND', 'no such method');
    if (!tokens.has(String(req.headers.authorization).replace(/^Bearer /, ''))) {
      return googleError(res, 401, 'UNAUTHENTICATED', 'invalid credentials');
    }
    if (failing > 0) {
      failing--;
      return googleError(res, 503, 'UNAVAILABLE', 'try again');
    }
    const service = decodeURIComponent(m[1]);
    const input = JSON.parse(body || '{}');
    if (m[2] === 'check') {
      d.checks.push({ service, operation: input.operation });
      const blocked = d.blockedConsumers.has(input.operation?.consumerId);
      return json(res, 200, {
        operationId: input.operation?.operationId,
        ...(blocked ? { checkErrors: [{ code: 'PROJECT_DELETED', detail: `${input.operation.consumerId} is not usable` }] } : {}),
        serviceConfigId: '2026-11-01r0',
      });
    }
    d.reports.push({ service, operations: input.operations });
    const reportErrors = (input.operations as { operationId: string; metricValueSets: { metricName: string }[] }[])
      .filter((o) => o.metricValueSets.some((s) => d.rejectMetrics.has(s.metricName)))
      .map((o) => ({ operationId: o.operationId, status: { code: 3, message: 'metric is not defined for the service' } }));
    return json(res, 200, { ...(reportErrors.length ? { reportErrors } : {}), serviceConfigId: '2026-11-01r0' });
  });
  d.keyFile = (dir: string) => {
    const file = path.join(dir, 'providerc-service-account.json');
    writeFileSync(
      file,
      JSON.stringify({
        type: 'service_account',
        client_email: 'metering@test-project.iam.gserviceaccount.com',
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
        token_uri: `${url}/token`,
      }),
    );
    return file;
  };
  return Object.assign(d, { url, close: () => new Promise<void>((r) => server.close(() => r())) });
}
