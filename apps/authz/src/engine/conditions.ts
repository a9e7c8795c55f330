import * as net from 'node:net';
import { Environment } from '@marcbachmann/cel-js';
import { ConditionError } from './errors';

/** A condition's parameter type in OpenFGA's JSON model: `TYPE_NAME_INT`, or a list/map with its element type. */
export interface ConditionParamType {
  type_name: string;
  generic_types?: ConditionParamType[];
}

/** A `condition name(params) { expression }` block of the JSON model. */
export interface ConditionDefinition {
  name: string;
  expression: string;
  parameters?: Record<string, ConditionParamType>;
}

/** The condition a tuple is written with: its name and the parameter values fixed at write time. */
export interface TupleCondition {
  name: string;
  context?: Record<string, unknown>;
}

/** A request's context: the parameter values a check (or list) supplies to every condition it meets. */
export type RequestContext = Record<string, unknown>;

/** OpenFGA's `ipaddress` parameter type: an address that answers `in_cidr("10.0.0.0/8")`. */
export class IPAddress {
  constructor(readonly address: string) {}

  /** Whether the address lies in the CIDR block (IPv4 or IPv6; an IPv4 address is never in an IPv6 block). */
  inCidr(cidr: string): boolean {
    const slash = cidr.indexOf('/');
    const base = slash < 0 ? '' : cidr.slice(0, slash);
    const bits = slash < 0 ? NaN : Number(cidr.slice(slash + 1));
    const family = net.isIP(base);
    if (!family || !Number.isInteger(bits) || bits < 0 || bits > (family === 4 ? 32 : 128) || !/^\d+$/.test(cidr.slice(slash + 1))) {
      throw new Error(`invalid CIDR '${cidr}'`);
    }
    if (net.isIP(this.address) !== family) return false;
    const list = new net.BlockList();
    list.addSubnet(base, bits, family === 4 ? 'ipv4' : 'ipv6');
    return list.check(this.address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

// The CEL names of OpenFGA's parameter types (cel-js names timestamp and duration by their protobuf types).
const SCALARS: Record<string, string> = {
  TYPE_NAME_ANY: 'dyn',
  TYPE_NAME_BOOL: 'bool',
  TYPE_NAME_STRING: 'string',
  TYPE_NAME_INT: 'int',
  TYPE_NAME_UINT: 'uint',
  TYPE_NAME_DOUBLE: 'double',
  TYPE_NAME_DURATION: 'google.protobuf.Duration',
  TYPE_NAME_TIMESTAMP: 'google.protobuf.Timestamp',
  TYPE_NAME_IPADDRESS: 'ipaddress',
};

function celType(t: ConditionParamType): string {
  if (t.type_name === 'TYPE_NAME_LIST') return `list<${celType(t.generic_types?.[0] ?? { type_name: 'TYPE_NAME_ANY' })}>`;
  if (t.type_name === 'TYPE_NAME_MAP') return `map<string, ${celType(t.generic_types?.[0] ?? { type_name: 'TYPE_NAME_ANY' })}>`;
  const scalar = SCALARS[t.type_name];
  if (!scalar) throw new Error(`unsupported condition parameter type ${t.type_name}`);
  return scalar;
}

/** The environment every condition extends: OpenFGA's `ipaddress` type and its `in_cidr` method. */
function baseEnvironment(): Environment {
  return new Environment({ homogeneousAggregateLiterals: false }).registerType('ipaddress', { ctor: IPAddress }).registerFunction({
    name: 'in_cidr',
    receiverType: 'ipaddress',
    returnType: 'bool',
    params: [{ name: 'cidr', type: 'string' }],
    handler: (ip: IPAddress, cidr: string) => ip.inCidr(cidr),
  });
}

// Turns JSON values into CEL's timestamp, duration and uint with CEL's own constructors (and their errors).
const converter = new Environment().registerVariable('s', 'string').registerVariable('n', 'int');
const toTimestamp = converter.parse('timestamp(s)');
const toDuration = converter.parse('duration(s)');
const toUint = converter.parse('uint(n)');

/** A JSON value (from a tuple's or a request's context) as the parameter type asks, or an error saying why not. */
function convert(value: unknown, t: ConditionParamType): unknown {
  const fail = (): never => {
    throw new Error(`expected ${describeType(t)}, got ${JSON.stringify(value)}`);
  };
  switch (t.type_name) {
    case 'TYPE_NAME_ANY':
      return toCel(value);
    case 'TYPE_NAME_BOOL':
      return typeof value === 'boolean' ? value : fail();
    case 'TYPE_NAME_STRING':
      return typeof value === 'string' ? value : fail();
    case 'TYPE_NAME_INT':
    case 'TYPE_NAME_UINT': {
      const n =
        typeof value === 'number' && Number.isInteger(value)
          ? BigInt(value)
          : typeof value === 'string' && /^-?\d+$/.test(value)
            ? BigInt(value)
            : fail();
      if (t.type_name === 'TYPE_NAME_INT') return n;
      if (n < 0n) fail();
      return toUint({ n });
    }
    case 'TYPE_NAME_DOUBLE':
      return toDouble(value) ?? fail();
    case 'TYPE_NAME_TIMESTAMP':
      return typeof value === 'string' ? toTimestamp({ s: value }) : fail();
    case 'TYPE_NAME_DURATION':
      return typeof value === 'string' ? toDuration({ s: value }) : fail();
    case 'TYPE_NAME_IPADDRESS':
      return typeof value === 'string' && net.isIP(value) ? new IPAddress(value) : fail();
    case 'TYPE_NAME_LIST':
      return Array.isArray(value) ? value.map((v) => convert(v, t.generic_types?.[0] ?? { type_name: 'TYPE_NAME_ANY' })) : fail();
    case 'TYPE_NAME_MAP':
      if (!value || typeof value !== 'object' || Array.isArray(value)) fail();
      return new Map(
        Object.entries(value as object).map(([k, v]) => [k, convert(v, t.generic_types?.[0] ?? { type_name: 'TYPE_NAME_ANY' })]),
      );
    default:
      return fail();
  }
}

// A decimal number as OpenFGA parses a double from a string (Go's big.ParseFloat, base 10): no spaces, no hex.
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A double parameter's value: a number, or a string holding a decimal one. A value beyond float64's range is an
 * error, as in OpenFGA, not ±Infinity (nor is a JSON literal that overflowed on its way here, which arrives as one).
 */
function toDouble(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && DECIMAL.test(value) ? Number(value) : undefined;
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}

/** A JSON value of unknown type as CEL sees it: integers as int, objects as maps. */
function toCel(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(toCel);
  if (value && typeof value === 'object') return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  return value;
}

function describeType(t: ConditionParamType): string {
  const name = t.type_name.replace('TYPE_NAME_', '').toLowerCase();
  return t.generic_types?.length ? `${name}<${t.generic_types.map(describeType).join(', ')}>` : name;
}

/** One compiled condition. */
class CompiledCondition {
  private readonly program: (context: Record<string, unknown>) => unknown;
  private readonly params: [string, ConditionParamType][];

  constructor(readonly definition: ConditionDefinition) {
    this.params = Object.entries(definition.parameters ?? {});
    let env = baseEnvironment();
    for (const [name, type] of this.params) env = env.registerVariable(name, celType(type));
    const parsed = env.parse(definition.expression);
    const checked = parsed.check();
    if (!checked.valid) throw new Error(`condition ${definition.name}: ${checked.error?.message.split('\n')[0]}`);
    if (checked.type !== 'bool') throw new Error(`condition ${definition.name}: expected a bool expression, got ${checked.type}`);
    this.program = parsed;
  }

  /**
   * Whether the condition holds. The request's context and the tuple's are merged as OpenFGA merges them: a
   * parameter the tuple was written with wins over the request's. A parameter neither supplies is an error naming it.
   */
  evaluate(tuple: string, tupleContext: Record<string, unknown> | undefined, request: RequestContext | undefined): boolean {
    const merged: Record<string, unknown> = { ...request, ...tupleContext };
    const values: Record<string, unknown> = {};
    const missing: string[] = [];
    for (const [name, type] of this.params) {
      if (!(name in merged) || merged[name] === null) {
        missing.push(name);
        continue;
      }
      try {
        values[name] = convert(merged[name], type);
      } catch (err) {
        throw new ConditionError(
          this.definition.name,
          `failed to convert context parameter '${name}': ${(err as Error).message.split('\n')[0]}`,
        );
      }
    }
    if (missing.length)
      throw new ConditionError(this.definition.name, `tuple '${tuple}' is missing context parameters '[${missing.sort().join(' ')}]'`);
    try {
      return this.program(values) === true;
    } catch (err) {
      throw new ConditionError(this.definition.name, `failed to evaluate condition expression: ${(err as Error).message.split('\n')[0]}`);
    }
  }
}

/** The model's conditions, compiled once when the model loads (an invalid one refuses the model, as OpenFGA does). */
export class Conditions {
  private readonly compiled = new Map<string, CompiledCondition>();

  constructor(definitions: Record<string, ConditionDefinition> = {}) {
    for (const [name, def] of Object.entries(definitions)) this.compiled.set(name, new CompiledCondition({ ...def, name }));
  }

  has(name: string): boolean {
    return this.compiled.has(name);
  }

  get size(): number {
    return this.compiled.size;
  }

  /** The parameters a condition declares. */
  parameters(name: string): string[] {
    return Object.keys(this.compiled.get(name)?.definition.parameters ?? {});
  }

  /** Whether a tuple's condition holds for the request's context; `tuple` names it in errors (`object#relation@user`). */
  evaluate(tuple: string, condition: TupleCondition, request: RequestContext | undefined): boolean {
    const c = this.compiled.get(condition.name);
    if (!c) throw new ConditionError(condition.name, 'condition was not found');
    return c.evaluate(tuple, condition.context, request);
  }
}
