import { APPS } from '../src/apps';
import { appSchemasOn } from '../src/app-schemas';

// A restore checks its target against app-schemas.ts before it loads any app's code; what it checks must be what the
// apps themselves open, or a filled schema would pass as empty.
describe('the schemas a restore checks before loading the apps', () => {
  it('are the schemas the apps define, on Postgres and on the embedded database', () => {
    const defined = APPS.flatMap(({ database }) => (database ? [database] : []));
    expect(appSchemasOn(false).sort()).toEqual(defined.map((d) => d.schema).sort());
    expect(appSchemasOn(true).sort()).toEqual(
      defined
        .filter((d) => !d.serverOnly)
        .map((d) => d.schema)
        .sort(),
    );
  });
});
