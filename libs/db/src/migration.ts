import type { Knex } from 'knex';

/**
 * One schema change of a service. Migrations live beside the service (apps/<app>/migrations), named
 * `<timestamp>_<what>.ts`, and get the service's schema so every table is schema-qualified.
 */
export interface Migration {
  name: string;
  up(knex: Knex, schema: string): Promise<void>;
  down(knex: Knex, schema: string): Promise<void>;
}

/** A knex migration source over a static list, so migrations bundle with the app and need no file scanning. */
export class StaticMigrationSource implements Knex.MigrationSource<Migration> {
  constructor(
    private readonly migrations: Migration[],
    private readonly schema: string,
  ) {}

  async getMigrations(): Promise<Migration[]> {
    return this.migrations;
  }

  getMigrationName(m: Migration): string {
    return m.name;
  }

  async getMigration(m: Migration): Promise<Knex.Migration> {
    return { up: (k) => m.up(k, this.schema), down: (k) => m.down(k, this.schema) };
  }
}
