import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dslSha256, keptParseText, modelFromDsl, modelOfFile, PLATFORM_MODEL_FILE, REPARSE_COMMAND, type KeptParse } from './model';

const DSL = `model
  schema 1.1

type user

type team
  relations
    define member: [user]
`;

// authz's start reads the model's parse kept beside platform.fga rather than parsing it: what it reads must be the
// parse of the text beside it, and a parse of any other text must never be used.
describe("the model's kept parse", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kept-model-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is the parse of platform.fga as it is now', () => {
    const dsl = fs.readFileSync(PLATFORM_MODEL_FILE, 'utf8');
    const kept = fs.readFileSync(`${PLATFORM_MODEL_FILE}.json`, 'utf8');
    if (kept !== keptParseText(dsl))
      throw new Error(`apps/authz/model/platform.fga.json is not the parse of platform.fga: run ${REPARSE_COMMAND}`);
  });

  it('is used when it is of the file as it is', () => {
    const file = path.join(dir, 'used.fga');
    fs.writeFileSync(file, DSL);
    // A parse kept of this very text, marked so that its use shows.
    const marked = { ...modelFromDsl(DSL), type_definitions: [{ type: 'marked', relations: {} }] };
    fs.writeFileSync(`${file}.json`, JSON.stringify({ dslSha256: dslSha256(DSL), model: marked } satisfies KeptParse));
    expect(modelOfFile(file).type_definitions.map((t) => t.type)).toEqual(['marked']);
  });

  it('is not used when the file changed since, nor when it cannot be read: the file is parsed', () => {
    const file = path.join(dir, 'changed.fga');
    fs.writeFileSync(file, DSL);
    const other = { ...modelFromDsl(DSL), type_definitions: [{ type: 'stale', relations: {} }] };
    fs.writeFileSync(`${file}.json`, JSON.stringify({ dslSha256: dslSha256(`${DSL}\n# edited`), model: other } satisfies KeptParse));
    expect(modelOfFile(file).type_definitions.map((t) => t.type)).toEqual(['user', 'team']);
    fs.writeFileSync(`${file}.json`, '{ not json');
    expect(modelOfFile(file).type_definitions.map((t) => t.type)).toEqual(['user', 'team']);
    fs.rmSync(`${file}.json`);
    expect(modelOfFile(file).type_definitions.map((t) => t.type)).toEqual(['user', 'team']);
  });
});
