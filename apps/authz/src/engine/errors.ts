import { DomainError } from '@platform/errors';

/** A tuple or check that does not fit the model: unknown type or relation, or a user type the relation does not accept. */
export class InvalidTupleError extends DomainError {
  constructor(message: string) {
    super('input', message);
  }
}

/** A write of a tuple that already exists, or a delete of one that does not (OpenFGA refuses both). */
export class TupleConflictError extends DomainError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** A check that needed more than the resolution depth limit of nested lookups (OpenFGA's limit is 25). */
export class ResolutionTooComplexError extends DomainError {
  constructor(limit: number) {
    // OpenFGA answers this with a 400 (authorization_model_resolution_too_complex), so it is an input error.
    super('input', `authorization model resolution too complex: more than ${limit} nested lookups`);
  }
}

/**
 * A condition that could not be evaluated: a parameter neither the tuple nor the request supplies, a value of the
 * wrong type, an expression that fails. OpenFGA answers these with a 400, in its words.
 */
export class ConditionError extends DomainError {
  constructor(
    readonly condition: string,
    reason: string,
  ) {
    super('input', `failed to evaluate relationship condition: '${condition}' - ${reason}`);
  }
}
