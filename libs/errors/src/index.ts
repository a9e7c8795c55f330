export * from './domain-error';
export * from './bounded';
export { toGrpcStatus, fromGrpcError, messageSizeError, ERROR_DETAIL_KEY } from './grpc';
export { toHttpError, type HttpError } from './http';
export { crashPoint } from './crash-points';
export { withRetries, withRetriesSync, retryDelayMs, within, type RetryPolicy } from './retry';
