import { z } from 'zod';
import { InputError, ValidationError, type FieldViolation } from '@platform/errors';
import type { FieldLimits, ServiceBinding } from './service-binding';

/** Characters of a base64 `data:` URI holding `bytes` bytes of an image, with room for its media-type prefix. */
const dataUriLength = (bytes: number) => Math.ceil(bytes / 3) * 4 + 64;

/**
 * The longest value, in characters, of each kind of text the API accepts. The gateway refuses longer ones
 * before any backend is called, and the backend owning the value refuses them again where it stores it
 * (docs/limits.md). Where Gitea has a limit for the same field, it is Gitea's.
 */
export const TEXT_LIMITS = {
  /** User logins and organization names (Gitea: 40). */
  login: 40,
  /** Email addresses (Gitea: 254, RFC 5321). */
  email: 254,
  /** Passwords (Gitea: 255). */
  password: 255,
  /** Full names of users and organizations (Gitea: 100). */
  fullName: 100,
  /** Descriptions of organizations, teams and custom roles (Gitea: 255). */
  description: 255,
  /** An organization's website (Gitea: 255). */
  website: 255,
  /** An organization's location (Gitea: 50). */
  location: 50,
  /** The multi-cluster-manager endpoint URL of an organization. */
  endpoint: 1024,
  /** Team names (Gitea: 255). */
  teamName: 255,
  /** Contract names. */
  contractName: 255,
  /** Custom role names. */
  roleName: 255,
  /** Names of personal access tokens and sync tokens. */
  tokenName: 255,
  /** Token values presented or supplied (personal tokens are 40 characters). */
  token: 256,
  /** Namespace or action of a permission (`edit`, `org`). */
  permissionPart: 64,
  /** objectType of allowed-permissions (`organization`, `robot_ac`). */
  objectType: 32,
  /** Values chosen from a short list: visibility, orgType, team type and permission, avatar source. */
  choice: 32,
  /** Team unit names. */
  teamUnit: 64,
  /** The branding application name. */
  appName: 64,
  /** The branding primary color (`#1f6feb`). */
  color: 32,
  /** Branding logo and favicon data URIs: their decoded images are at most 256 KiB and 64 KiB. */
  logo: dataUriLength(256 * 1024),
  favicon: dataUriLength(64 * 1024),
  /** An email domain (DNS: 253). */
  domain: 253,
  /** The gravatar lookup of an avatar (an email address or its hash). */
  avatarLookup: 254,
  /** Any path parameter the table above does not name (ids, keys, actions). */
  pathParam: 255,
  /** Any query parameter value. */
  queryValue: 1024,
} as const;

/** Any string field of a gRPC request that its service names no tighter limit for. */
export const MAX_STRING_FIELD = 64 * 1024;

/** The gRPC message-size limit when GRPC_MAX_MESSAGE_BYTES is unset: gRPC's own default receive limit. */
export const DEFAULT_GRPC_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * GRPC_MAX_MESSAGE_BYTES: the largest gRPC message (request or answer) a server or the gateway's clients
 * send or accept. At least 4 MiB, so an avatar (AVATAR_MAX_BYTES, at most 3 MiB) always fits.
 */
export const grpcMessageLimitVar = z.coerce
  .number()
  .int()
  .min(DEFAULT_GRPC_MAX_MESSAGE_BYTES)
  .max(64 * 1024 * 1024)
  .default(DEFAULT_GRPC_MAX_MESSAGE_BYTES);

/** grpc-js options setting both message-size limits explicitly. */
export function grpcMessageOptions(maxBytes = DEFAULT_GRPC_MAX_MESSAGE_BYTES) {
  return { 'grpc.max_receive_message_length': maxBytes, 'grpc.max_send_message_length': maxBytes };
}

/** One text to check: its field name (as the client sent it), its value (absent: nothing to check) and its limit. */
export type LengthCheck = [field: string, value: string | null | undefined, max: number];

/**
 * Refuses texts over their limits, naming each field and its limit, never the value: 400 (`input`) or 422
 * (`validation`), whichever the route answers for a bad value of that field.
 */
export function checkLengths(checks: LengthCheck[], kind: 'input' | 'validation' = 'input'): void {
  const violations: FieldViolation[] = checks
    .filter(([, value, max]) => typeof value === 'string' && value.length > max)
    .map(([field, , max]) => ({ field, description: `at most ${max} characters` }));
  if (violations.length === 0) return;
  const message = violations.map((v) => `${v.field}: ${v.description}`).join('; ');
  throw kind === 'input' ? new InputError(message, violations) : new ValidationError(message, violations);
}

/** Refuses (400) a request with a string field over its limit, naming the field; bytes fields are not text. */
export function checkRequestLimits(request: unknown, limits: FieldLimits = {}, fallback = MAX_STRING_FIELD): void {
  const walk = (value: unknown, path: string, depth: number): void => {
    if (typeof value === 'string') {
      checkLengths([[path, value, limits[path] ?? fallback]]);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, `${path}[]`, depth + 1);
    } else if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value) && depth < 16) {
      for (const [key, v] of Object.entries(value)) walk(v, path ? `${path}.${key}` : key, depth + 1);
    }
  };
  walk(request, '', 0);
}

/** One service's field limits by method, typed against its generated definition. */
export interface ServiceLimits {
  definition: unknown;
  methods: Record<string, FieldLimits>;
}

/** The field limits of some methods of a service (method names as in the definition, e.g. `createOrg`). */
export function serviceLimits<D>(definition: D, methods: { [K in keyof D]?: FieldLimits }): ServiceLimits {
  return { definition, methods: methods as Record<string, FieldLimits> };
}

/** The bindings, each with the limits `table` gives its service; the server checks them before every call. */
export function withLimits(table: ServiceLimits[], bindings: ServiceBinding<any>[]): ServiceBinding<any>[] {
  return bindings.map((binding) => {
    const found = table.find((t) => t.definition === binding.definition);
    return found ? { ...binding, limits: { ...found.methods, ...binding.limits } } : binding;
  });
}

/**
 * grpc-js keeps channelz's record of every call (counts, last call times, traces) unless told not to: work on every call
 * of every client and server, for a debugging service the platform never serves.
 */
export const NO_CHANNELZ = { 'grpc.enable_channelz': 0 } as const;
