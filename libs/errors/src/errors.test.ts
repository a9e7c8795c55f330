import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { knex } from 'knex';
import {
  ConflictError,
  DomainError,
  InputError,
  MethodNotAllowedError,
  NotFoundError,
  TooManyRequestsError,
  UnavailableError,
  ValidationError,
  fromGrpcError,
  toGrpcStatus,
  toHttpError,
} from './index';

/** What a client sees after the server turned `err` into a status. */
function overTheWire(err: unknown): DomainError {
  const s = toGrpcStatus(err);
  const e = Object.assign(new Error(s.details), { code: s.code, details: s.details, metadata: s.metadata ?? new Metadata() });
  return fromGrpcError(e as ServiceError);
}

describe('one error vocabulary, mapped to gRPC and back to HTTP', () => {
  it.each([
    [new InputError('bad uid'), status.INVALID_ARGUMENT, 400],
    [new ValidationError('malformed body'), status.INVALID_ARGUMENT, 422],
    [new NotFoundError('no such org'), status.NOT_FOUND, 404],
    [new ConflictError('already a member'), status.ALREADY_EXISTS, 409],
    [new MethodNotAllowedError('contract revoked'), status.FAILED_PRECONDITION, 405],
  ])('%s keeps its message and HTTP status across a gRPC hop', (err, code, http) => {
    expect(toGrpcStatus(err).code).toBe(code);
    const back = overTheWire(err);
    expect(back.message).toBe(err.message);
    expect(toHttpError(back).status).toBe(http);
  });

  it('restores the error class, so instanceof works on the client', () => {
    expect(overTheWire(new NotFoundError('no such org'))).toBeInstanceOf(NotFoundError);
    expect(overTheWire(new ConflictError('taken'))).toBeInstanceOf(ConflictError);
  });

  it('carries field violations and headers through the hop', () => {
    const err = new DomainError('input', 'see other', { httpStatus: 302, headers: { location: '/x' } });
    const back = overTheWire(err);
    expect(back.httpStatus).toBe(302);
    expect(back.headers).toEqual({ location: '/x' });
    const v = overTheWire(new ValidationError('bad', [{ field: 'body.username', description: 'required' }]));
    expect(toHttpError(v).body.errors).toEqual([{ field: 'body.username', description: 'required' }]);
  });

  it('maps too-many-requests to RESOURCE_EXHAUSTED and back to 429 with its Retry-After', () => {
    const err = new TooManyRequestsError('too many failed sign-in attempts', 42.2);
    expect(toGrpcStatus(err).code).toBe(status.RESOURCE_EXHAUSTED);
    const back = overTheWire(err);
    expect(back).toBeInstanceOf(TooManyRequestsError);
    expect((back as TooManyRequestsError).retryAfterSeconds).toBe(43);
    expect(toHttpError(back)).toEqual({
      status: 429,
      body: { message: 'too many failed sign-in attempts' },
      headers: { 'retry-after': '43' },
      log: false,
    });
    expect(toHttpError(overTheWire(new TooManyRequestsError('slow down'))).headers).toEqual({});
  });

  it('hides the details of unexpected errors behind a generic 500', () => {
    const back = overTheWire(new Error('password=hunter2 leaked in a stack'));
    expect(back.kind).toBe('internal');
    expect(back.message).toBe('internal server error');
    expect(toHttpError(new TypeError('x is undefined'))).toMatchObject({
      status: 500,
      body: { message: 'internal server error' },
      log: true,
    });
  });

  it('maps plain gRPC statuses from foreign servers with the standard table', () => {
    const e = (code: status) =>
      fromGrpcError(Object.assign(new Error('x'), { code, details: 'x', metadata: new Metadata() }) as ServiceError);
    expect(toHttpError(e(status.PERMISSION_DENIED)).status).toBe(403);
    expect(toHttpError(e(status.UNAVAILABLE)).status).toBe(503);
    expect(toHttpError(e(status.ABORTED)).status).toBe(409);
    expect(toHttpError(e(status.UNKNOWN)).status).toBe(500);
  });

  it('answers a database out of connections (or out of reach) 503 with Retry-After across the hop, never 500', () => {
    const pg = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });
    const unavailable = [
      pg('53300', 'sorry, too many clients already'),
      pg('53300', 'too many connections for role "app"'),
      pg('53400', 'configuration limit exceeded'),
      pg('53200', 'out of memory'),
      pg('08006', 'connection failure'),
      pg('57P03', 'the database system is starting up'),
      new knex.KnexTimeoutError('Knex: Timeout acquiring a connection. The pool is probably full.'),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }),
    ];
    for (const err of unavailable) {
      const direct = toHttpError(err);
      expect({ err: err.message, status: direct.status, retryAfter: direct.headers['retry-after'] }).toEqual({
        err: err.message,
        status: 503,
        retryAfter: '2',
      });
      expect(toGrpcStatus(err).code).toBe(status.UNAVAILABLE);
      const back = toHttpError(overTheWire(err));
      expect({ err: err.message, status: back.status, retryAfter: back.headers['retry-after'] }).toEqual({
        err: err.message,
        status: 503,
        retryAfter: '2',
      });
      // What the client reads names no address.
      expect(back.body.message).not.toMatch(/10\.0\.0\.5|app/);
    }
    expect(toHttpError(pg('53300', 'sorry, too many clients already')).body.message).toBe(
      'the database cannot take this request now: it has no connection to spare (too many clients); try again shortly',
    );
    // Other database errors are still ours: 500.
    for (const err of [
      pg('42P01', 'relation "x" does not exist'),
      pg('23502', 'null value'),
      Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    ])
      expect(toHttpError(err).status).toBe(500);
  });

  it('gives every 503 a Retry-After, a backend that cannot be reached too, and keeps one the error names', () => {
    expect(toHttpError(new UnavailableError('orgs-teams is unavailable')).headers).toEqual({ 'retry-after': '2' });
    const own = new DomainError('unavailable', 'restoring', { headers: { 'Retry-After': '30' } });
    expect(toHttpError(own).headers).toEqual({ 'Retry-After': '30' });
    expect(toHttpError(new NotFoundError('x')).headers).toEqual({});
  });
});
