// Writes apps/authz/model/platform.fga.json, the parse of platform.fga that authz's start reads instead of parsing
// (model.ts, modelOfFile). Run after changing platform.fga (a unit test says so while the two differ):
//   npx tsx --tsconfig tsconfig.base.json apps/authz/src/engine/write-kept-model.ts
import * as fs from 'node:fs';
import * as path from 'node:path';
import { keptParseText, PLATFORM_MODEL_FILE } from './model';

fs.writeFileSync(`${PLATFORM_MODEL_FILE}.json`, keptParseText(fs.readFileSync(PLATFORM_MODEL_FILE, 'utf8')));
console.log(`wrote ${path.relative(process.cwd(), `${PLATFORM_MODEL_FILE}.json`)}`);
