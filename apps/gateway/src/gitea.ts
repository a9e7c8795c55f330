import { DomainError, ValidationError } from '@platform/errors';

/**
 * What the gateway answers differently from the backends so that Gitea's clients read Gitea's answers
 * (docs/gitea-dialect.md): a taken name is 422, and "never" is Gitea's zero time.
 */

/** Gitea's zero time (Go's `time.Time{}`), which Gitea answers for a date-time that never happened (a user who never signed in). */
export const GITEA_ZERO_TIME = '0001-01-01T00:00:00Z';

/** Unix seconds as RFC 3339 without fractional seconds; 0 (never) as Gitea's zero time, so a Gitea client always reads a string. */
export const giteaTime = (unix: number) => (unix ? new Date(unix * 1000).toISOString().replace(/\.000Z$/, 'Z') : GITEA_ZERO_TIME);

/**
 * A create of Gitea's (an organization, a user, a team) whose name is taken: 422 as Gitea answers it, with the
 * service's message; the services themselves, and the platform's own routes, keep 409.
 */
export async function takenNameIs422<T>(create: Promise<T>, field: string): Promise<T> {
  try {
    return await create;
  } catch (err) {
    if (err instanceof DomainError && err.kind === 'conflict')
      throw new ValidationError(err.message, [{ field: `body.${field}`, description: 'taken' }]);
    throw err;
  }
}
