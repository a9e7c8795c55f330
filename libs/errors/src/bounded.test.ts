import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import {
  ConflictError,
  InputError,
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_VIOLATIONS,
  messageSizeError,
  quote,
  toGrpcStatus,
  toHttpError,
  truncate,
} from './index';

const serviceError = (code: status, details: string, metadata = new Metadata()) =>
  Object.assign(new Error(details), { code, details, metadata }) as ServiceError;

describe('bounded error texts', () => {
  it('quote shows a short value whole and a long one cut, with its length', () => {
    expect(quote('acme')).toBe('"acme"');
    expect(quote('a\nb')).toBe('"a\\nb"');
    const long = quote('x'.repeat(100_000));
    expect(long).toBe(`"${'x'.repeat(64)}…" (100000 characters)`);
    expect(quote('y'.repeat(20), 8)).toBe(`"${'y'.repeat(8)}…" (20 characters)`);
  });

  it('quote never splits a surrogate pair', () => {
    const s = `${'a'.repeat(63)}😀${'b'.repeat(10)}`;
    expect(quote(s)).toBe(`"${'a'.repeat(63)}…" (${s.length} characters)`);
  });

  it('truncate cuts to the limit with an ellipsis', () => {
    expect(truncate('short')).toBe('short');
    const cut = truncate('z'.repeat(5000));
    expect(cut).toHaveLength(MAX_ERROR_MESSAGE_LENGTH);
    expect(cut.endsWith('…')).toBe(true);
  });

  it('a domain error carrying a huge input leaves a service as a short gRPC status and HTTP body', () => {
    const huge = 'x'.repeat(100_000);
    const err = new InputError(
      `objectType '${huge}' is invalid`,
      Array.from({ length: 500 }, (_, i) => ({ field: `f${i}${huge}`, description: huge })),
    );
    const s = toGrpcStatus(err);
    expect(s.details!.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_LENGTH);
    // The trailer that carries the violations stays small too.
    const trailer = s.metadata!.get('platform-error-bin')[0] as Buffer;
    expect(trailer.length).toBeLessThan(16 * 1024);
    const http = toHttpError(err);
    expect(http.body.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_LENGTH);
    expect(http.body.errors).toHaveLength(MAX_VIOLATIONS);
    expect(JSON.stringify(http.body).length).toBeLessThan(16 * 1024);
  });
});

describe('gRPC message-size failures', () => {
  it('are 413 naming the direction and the service, never the content', () => {
    const request = messageSizeError(
      serviceError(status.RESOURCE_EXHAUSTED, 'Attempted to send message with a size larger than 4194304'),
      'authz',
      4194304,
    );
    expect(request).toMatchObject({
      httpStatus: 413,
      message: 'request too large: the call to authz exceeds the gRPC message size limit of 4194304 bytes',
    });
    expect(toHttpError(request)).toMatchObject({ status: 413, log: false });

    const response = messageSizeError(
      serviceError(status.RESOURCE_EXHAUSTED, 'Sent message larger than max (5000000 vs. 4194304)'),
      'orgs-teams',
    );
    expect(response).toMatchObject({ httpStatus: 413, message: expect.stringMatching(/^response too large: the answer of orgs-teams/) });

    for (const received of [
      'Received message larger than max (5000000 vs 4194304)',
      'Received message that decompresses to a size larger than 4194304',
    ]) {
      expect(messageSizeError(serviceError(status.RESOURCE_EXHAUSTED, received), 'authz')).toMatchObject({
        httpStatus: 413,
        message: expect.stringMatching(/^message too large/),
      });
    }
  });

  it('leave other failures, and a handler refusing with RESOURCE_EXHAUSTED (429), to the usual mapping', () => {
    expect(
      messageSizeError(serviceError(status.RESOURCE_EXHAUSTED, 'Bandwidth exhausted or memory limit exceeded'), 'authz'),
    ).toBeUndefined();
    expect(messageSizeError(serviceError(status.INVALID_ARGUMENT, 'Sent message larger than max (1 vs. 0)'), 'authz')).toBeUndefined();
    // A handler's own error carries the ErrorDetail trailer, so it is never mistaken for a size failure.
    const own = toGrpcStatus(new ConflictError('Sent message larger than max'));
    expect(messageSizeError(serviceError(status.RESOURCE_EXHAUSTED, own.details!, own.metadata), 'authz')).toBeUndefined();
  });
});
