import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Conditions, type ConditionDefinition, type TupleCondition } from './conditions';
import { InvalidTupleError } from './errors';
import { assertRelationName, parseObject, parseUser, type ObjectRef, type UserRef } from './tuple';
import type { Tuple } from './types';

/** A relation's rewrite in OpenFGA's JSON model (exactly one field is set). */
export interface Userset {
  this?: Record<string, never>;
  computedUserset?: { object?: string; relation: string };
  tupleToUserset?: { tupleset: { object?: string; relation: string }; computedUserset: { object?: string; relation: string } };
  union?: { child: Userset[] };
  intersection?: { child: Userset[] };
  difference?: { base: Userset; subtract: Userset };
}

/** A type restriction: `user`, `team#member` or `user:*`. */
export interface RelationReference {
  type: string;
  relation?: string;
  wildcard?: Record<string, never>;
  condition?: string;
}

/** One type of the JSON model. */
export interface TypeDefinition {
  type: string;
  relations?: Record<string, Userset>;
  metadata?: { relations?: Record<string, { directly_related_user_types?: RelationReference[] }> } | null;
}

/** OpenFGA's JSON authorization model (what the API's WriteAuthorizationModel takes). */
export interface AuthorizationModel {
  schema_version: string;
  type_definitions: TypeDefinition[];
  conditions?: Record<string, ConditionDefinition>;
}

/** apps/authz/model, found by walking up from here so it works from source, from the bundle and in the image. */
export const MODEL_DIR: string = findModelDir(__dirname);

function findModelDir(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'apps', 'authz', 'model');
    if (fs.existsSync(path.join(candidate, 'platform.fga'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`apps/authz/model/platform.fga not found above ${start}`);
  }
}

/** The platform model file, apps/authz/model/platform.fga. */
export const PLATFORM_MODEL_FILE = path.join(MODEL_DIR, 'platform.fga');

/** Turns `.fga` DSL into the JSON model. */
export function modelFromDsl(dsl: string): AuthorizationModel {
  // Loaded when a model is parsed, not with this module: a start that finds its model's parse kept (modelOfFile) never
  // loads the parser (about 0.1 s).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { transformer } = require('@openfga/syntax-transformer') as typeof import('@openfga/syntax-transformer');
  return transformer.transformDSLToJSONObject(dsl) as unknown as AuthorizationModel;
}

/** What `<model>.fga.json` holds: the parse of the `.fga` file whose text has this SHA-256. */
export interface KeptParse {
  dslSha256: string;
  model: AuthorizationModel;
}

/** The command that writes apps/authz/model/platform.fga.json again; the staleness test names it. */
export const REPARSE_COMMAND = 'npx tsx --tsconfig tsconfig.base.json apps/authz/src/engine/write-kept-model.ts';

export const dslSha256 = (dsl: string): string => createHash('sha256').update(dsl).digest('hex');

/**
 * The JSON model of a `.fga` file: the parse kept beside it (`<file>.json`) when that is the parse of this very text,
 * else parsed now. Parsing the platform's model took about 0.25 s of CPU at every authz start (the parser is
 * ANTLR-generated JavaScript), for a file that changes only with a release; a kept parse of another text (the model
 * edited, the parse not written again) is never used.
 */
export function modelOfFile(file: string, dsl: string = fs.readFileSync(file, 'utf8')): AuthorizationModel {
  let kept: KeptParse | undefined;
  try {
    kept = JSON.parse(fs.readFileSync(`${file}.json`, 'utf8')) as KeptParse;
  } catch {
    kept = undefined; // none kept, or unreadable: parsed
  }
  return kept?.dslSha256 === dslSha256(dsl) && kept.model ? kept.model : modelFromDsl(dsl);
}

/** The kept parse of `dsl` as `<file>.json` holds it. */
export function keptParseText(dsl: string): string {
  return `${JSON.stringify({ dslSha256: dslSha256(dsl), model: modelFromDsl(dsl) } satisfies KeptParse, null, 2)}\n`;
}

/** The model's types and relations, with the lookups evaluation and tuple validation need. */
export class TypeSystem {
  private readonly types = new Map<string, TypeDefinition>();
  /**
   * Per type, the relations with a kind of user that counts only with a condition (`[user with c]` and no `[user]`):
   * there a tuple of that kind written without one (under an older model) is not read.
   */
  private readonly conditionRequired = new Map<string, Set<string>>();
  /** The model's conditions, compiled (CEL); a model whose condition does not compile is refused. */
  readonly conditions: Conditions;

  constructor(readonly model: AuthorizationModel) {
    if (model.schema_version !== '1.1') throw new Error(`unsupported model schema ${model.schema_version}; expected 1.1`);
    this.conditions = new Conditions(model.conditions);
    for (const def of model.type_definitions) {
      this.types.set(def.type, def);
      for (const [relation, refs] of Object.entries(def.metadata?.relations ?? {})) {
        const restrictions = refs.directly_related_user_types ?? [];
        for (const r of restrictions) {
          if (r.condition && !this.conditions.has(r.condition)) {
            throw new Error(`type ${def.type}, relation ${relation}: condition '${r.condition}' is not defined in the model`);
          }
          const sameShape = (o: RelationReference) =>
            o.type === r.type && (o.relation ?? '') === (r.relation ?? '') && !o.wildcard === !r.wildcard;
          if (r.condition && !restrictions.some((o) => !o.condition && sameShape(o))) {
            let relations = this.conditionRequired.get(def.type);
            if (!relations) this.conditionRequired.set(def.type, (relations = new Set()));
            relations.add(relation);
          }
        }
      }
    }
  }

  /** Parses and loads a `.fga` DSL model. */
  static fromDsl(dsl: string): TypeSystem {
    return new TypeSystem(modelFromDsl(dsl));
  }

  /** Loads a `.fga` file (its kept parse when there is one of its text: modelOfFile). */
  static fromFile(file: string = PLATFORM_MODEL_FILE): TypeSystem {
    return new TypeSystem(modelOfFile(file));
  }

  hasType(type: string): boolean {
    return this.types.has(type);
  }

  /** The relation names of a type. */
  relationsOf(type: string): string[] {
    return Object.keys(this.types.get(type)?.relations ?? {});
  }

  /** A relation's rewrite, or undefined when the type has no such relation. */
  rewrite(type: string, relation: string): Userset | undefined {
    return this.types.get(type)?.relations?.[relation];
  }

  /** The type restrictions of a relation's direct (`[...]`) part; empty when it is not directly assignable. */
  directTypes(type: string, relation: string): RelationReference[] {
    return this.types.get(type)?.metadata?.relations?.[relation]?.directly_related_user_types ?? [];
  }

  /** Whether tuples on type#relation may carry a condition (a restriction `with` one): only those reads are evaluated. */
  conditional(type: string, relation: string): boolean {
    return this.directTypes(type, relation).some((r) => r.condition);
  }

  /** Whether some kind of user counts on type#relation only with a condition (so a tuple of it without one does not). */
  requiresCondition(type: string, relation: string): boolean {
    return this.conditionRequired.get(type)?.has(relation) ?? false;
  }

  /** Whether a tuple with this user (and condition, or none) may sit on type#relation: a restriction names its exact shape. */
  accepts(type: string, relation: string, user: UserRef, condition?: string): boolean {
    return this.directTypes(type, relation).some((r) => matchesRestriction(r, user) && (r.condition ?? '') === (condition ?? ''));
  }

  /** Validates an object#relation pair: a known type with that relation. */
  assertRelation(object: ObjectRef, relation: string): void {
    assertRelationName(relation);
    if (!this.hasType(object.type)) throw new InvalidTupleError(`type '${object.type}' is not in the model`);
    if (!this.rewrite(object.type, relation)) {
      throw new InvalidTupleError(`relation '${relation}' is not defined on type '${object.type}'`);
    }
  }

  /** Validates a user: a known type, and for a userset a relation that type defines. */
  assertUser(user: UserRef): void {
    if (!this.hasType(user.type)) throw new InvalidTupleError(`type '${user.type}' is not in the model`);
    if (user.relation && !this.rewrite(user.type, user.relation)) {
      throw new InvalidTupleError(`relation '${user.relation}' is not defined on type '${user.type}'`);
    }
  }

  /** Parses and validates a tuple for writing, as OpenFGA does: the relation must accept the user's shape. */
  validateTuple(t: Tuple): { object: ObjectRef; user: UserRef; condition?: TupleCondition } {
    const object = parseObject(t.object);
    const user = parseUser(t.user);
    this.assertRelation(object, t.relation);
    this.assertUser(user);
    const condition = t.condition?.name ? t.condition : undefined;
    if (condition) {
      if (!this.conditions.has(condition.name)) {
        throw new InvalidTupleError(`tuple ${t.user} ${t.relation} ${t.object}: condition '${condition.name}' is not defined in the model`);
      }
      const params = new Set(this.conditions.parameters(condition.name));
      const unknown = Object.keys(condition.context ?? {}).filter((k) => !params.has(k));
      if (unknown.length) {
        throw new InvalidTupleError(
          `tuple ${t.user} ${t.relation} ${t.object}: condition '${condition.name}' has no parameter ${unknown.map((k) => `'${k}'`).join(', ')}`,
        );
      }
    }
    if (!this.accepts(object.type, t.relation, user, condition?.name)) {
      const allowed = this.directTypes(object.type, t.relation).map(formatRestriction);
      throw new InvalidTupleError(
        `tuple ${t.user} ${t.relation} ${t.object}: ${object.type}#${t.relation} ` +
          (allowed.length ? `accepts only [${allowed.join(', ')}]` : 'is not directly assignable'),
      );
    }
    return condition ? { object, user, condition: { name: condition.name, context: condition.context ?? {} } } : { object, user };
  }
}

/** Whether a user's shape is the one a restriction names (`user`, `user:*` or `team#member`). */
export function matchesRestriction(r: RelationReference, user: UserRef): boolean {
  if (r.type !== user.type) return false;
  if (r.wildcard) return user.id === '*' && !user.relation;
  return (r.relation ?? '') === user.relation && user.id !== '*';
}

/** A restriction as the DSL writes it. */
export function formatRestriction(r: RelationReference): string {
  const shape = r.wildcard ? `${r.type}:*` : r.relation ? `${r.type}#${r.relation}` : r.type;
  return r.condition ? `${shape} with ${r.condition}` : shape;
}
