export * from './domain-error';
export { toGrpcStatus, fromGrpcError, ERROR_DETAIL_KEY } from './grpc';
export { toHttpError, type HttpError } from './http';
