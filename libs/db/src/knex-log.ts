/**
 * knex's log for a real server: its warnings as knex prints them, except "Acquire connection error", which
 * knex writes (with a stack) before handing the same error to the caller. At start the caller turns it into
 * one line naming DATABASE_URL (service-kit start-errors.ts); while serving, the failed call reports it.
 */
export const knexLog = {
  warn(message: unknown): void {
    if (typeof message === 'string' && message.startsWith('Acquire connection error')) return;
    console.warn(message);
  },
};
