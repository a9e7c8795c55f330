import { randomBytes } from 'node:crypto';
import { knex, type Knex } from 'knex';
import pg from 'pg';
import { gatewayV1 } from '@platform/proto';
import { toHttpError, UnavailableError } from '@platform/errors';
import { testPostgresUrl } from '@platform/testing';
import { createClient } from './grpc-client';
import { startGrpcServer, type RunningGrpcServer } from './grpc-server';
import { bindService } from './service-binding';
import { createLogger } from './logger';

// A Postgres server that refuses a service's new connection (too many clients: SQLSTATE 53300, here a role whose
// CONNECTION LIMIT is 0) fails the call with 503 and Retry-After at the HTTP edge, across a real gRPC hop, not 500.

describe('a database out of connections', () => {
  let admin: pg.Client;
  let role: string;
  let limited: Knex;
  let server: RunningGrpcServer;

  beforeAll(async () => {
    const url = await testPostgresUrl();
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    role = `limited_${randomBytes(4).toString('hex')}`;
    await admin.query(`create role ${role} login connection limit 0`);
    const asRole = new URL(url);
    asRole.username = role;
    asRole.password = '';
    const quiet = () => {};
    limited = knex({
      client: 'pg',
      connection: asRole.toString(),
      pool: { min: 0, max: 1 },
      log: { warn: quiet, error: quiet, debug: quiet, deprecate: quiet },
    });
    server = await startGrpcServer({
      name: 'test',
      port: 0,
      host: '127.0.0.1',
      services: [
        bindService(gatewayV1.GatewayServiceService, {
          getVersion: async () => {
            await limited.raw('select 1');
            return { version: '1', service: 'test' };
          },
        }),
      ],
      protoFiles: ['platformadmin/gateway/v1/gateway.proto'],
      log: createLogger('test', 'silent'),
    });
  });
  afterAll(async () => {
    await server?.shutdown(100);
    await limited?.destroy();
    await admin?.query(`drop role if exists ${role}`);
    await admin?.end();
  });

  it('is answered 503 with Retry-After, the database named and no address or role', async () => {
    const direct = await limited.raw('select 1').catch((e: { code?: string }) => e);
    expect((direct as { code?: string }).code).toBe('53300');
    const client = createClient(gatewayV1.GatewayServiceService, `127.0.0.1:${server.port}`, { name: 'test' });
    try {
      const err = await client.getVersion({}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnavailableError);
      const answer = toHttpError(err);
      expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '2' } });
      expect(answer.body.message).toBe(
        'the database cannot take this request now: it has no connection to spare (too many clients); try again shortly',
      );
    } finally {
      client.close();
    }
  });
});
