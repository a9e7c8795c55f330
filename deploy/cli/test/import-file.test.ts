import { batchesOf, formatOf, readImportFile } from '../src/import-file';

// The import file as `cli import` reads it (docs/import.md): JSON and CSV give the same organizations, the file's shape
// is refused with the line at fault, and batches hold whole organizations.

const CSV = `organization,team,username,role,permissions,full_name,visibility,team_permission
acme,,,,,Acme Inc.,private,
acme,Owners,olivia,,,,,
acme,devs,mia,,,,,write
acme,devs,nora,,,,,
acme,devs,,editors,,,,
acme,,,editors,org/edit team/view,,,
globex,Owners,otto,,,,,
`;

const JSON_FILE = {
  organizations: [
    {
      name: 'acme',
      full_name: 'Acme Inc.',
      visibility: 'private',
      owners: ['olivia'],
      teams: [{ name: 'devs', permission: 'write', members: ['mia', 'nora'], roles: ['editors'] }],
      roles: [{ name: 'editors', permissions: ['org/edit', { namespace: 'team', action: 'view' }] }],
    },
    { name: 'globex', owners: ['otto'] },
  ],
};

describe('the import file', () => {
  it('reads CSV and JSON into the same organizations', () => {
    const fromCsv = readImportFile(CSV, 'csv');
    const fromJson = readImportFile(JSON.stringify(JSON_FILE), 'json');
    expect(fromCsv).toEqual([
      {
        name: 'acme',
        full_name: 'Acme Inc.',
        visibility: 'private',
        owners: ['olivia'],
        teams: [{ name: 'devs', permission: 'write', members: ['mia', 'nora'], roles: ['editors'] }],
        roles: [
          {
            name: 'editors',
            permissions: [
              { namespace: 'org', action: 'edit' },
              { namespace: 'team', action: 'view' },
            ],
          },
        ],
      },
      { name: 'globex', owners: ['otto'], teams: [], roles: [] },
    ]);
    expect(fromJson).toMatchObject(fromCsv);
  });

  it('refuses a file of the wrong shape, naming the line or the field', () => {
    expect(() => readImportFile('organization,nickname\nacme,x\n', 'csv')).toThrow(/unknown column nickname/);
    expect(() => readImportFile('organization,username\nacme,mia\n', 'csv')).toThrow(/line 2: a username needs a team/);
    expect(() => readImportFile('organization,full_name\nacme,A\nacme,B\n', 'csv')).toThrow(/line 3: full_name "B" differs from "A"/);
    expect(() => readImportFile('{"organizations": [{"name": "acme", "owners": "olivia"}]}', 'json')).toThrow(
      /organizations\[0\]\.owners: a list of strings/,
    );
    expect(() => readImportFile('{', 'json')).toThrow(/not JSON/);
    expect(() => formatOf('orgs.txt', 'xml')).toThrow(/json or csv/);
    expect(formatOf('orgs.CSV')).toBe('csv');
  });

  it('cuts batches of whole organizations, at most the memberships asked for unless one organization is larger', () => {
    const org = (name: string, members: number) => ({
      name,
      owners: ['o'],
      teams: [{ name: 't', members: Array.from({ length: members }, (_, i) => `u${i}`), roles: [] }],
      roles: [],
    });
    const batches = batchesOf([org('a', 3), org('b', 3), org('c', 10), org('d', 1)], 8);
    expect(batches.map((b) => b.map((o) => o.name))).toEqual([['a', 'b'], ['c'], ['d']]);
  });
});
