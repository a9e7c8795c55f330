import * as fs from 'node:fs';
import * as path from 'node:path';
import { isUuid, isUuidAnyCase, PRODUCT_KEYS } from '@platform/proto';

const ROOT = path.resolve(__dirname, '../../..');

/** Every hand-written source file of the apps, libs and tools (generated code, tests and the browser console aside). */
function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!['node_modules', 'gen', 'dist', 'test'].includes(entry.name)) walk(file);
      } else if (/\.tsx?$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) out.push(file);
    }
  };
  for (const top of ['apps', 'libs', 'deploy', 'bench']) walk(path.join(ROOT, top));
  // The console runs in the browser and imports no workspace code; it keeps its own copy for its forms.
  return out.filter((f) => !f.startsWith(path.join(ROOT, 'apps/console')) && f !== path.join(ROOT, 'libs/proto/src/names.ts'));
}

describe('shared names', () => {
  it('tells lower-case UUIDs from any-case ones and from other text', () => {
    expect([isUuid('6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e'), isUuid('6F1C2D3E-4A5B-4C6D-8E7F-901A2B3C4D5E')]).toEqual([true, false]);
    expect(isUuidAnyCase('6F1C2D3E-4A5B-4C6D-8E7F-901A2B3C4D5E')).toBe(true);
    expect([isUuid('6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5'), isUuidAnyCase('x6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e')]).toEqual([false, false]);
  });

  it('are defined once: no other source spells out the UUID pattern or the product list', () => {
    const again = sources().flatMap((file) => {
      const text = fs.readFileSync(file, 'utf8');
      const found: string[] = [];
      if (/\[0-9a-f(A-F)?\]\{8\}-/.test(text)) found.push(`${path.relative(ROOT, file)}: the UUID pattern (use isUuid or UUID_TEXT)`);
      if (new RegExp(PRODUCT_KEYS.map((k) => `['"]${k}['"]`).join(',\\s*')).test(text)) {
        found.push(`${path.relative(ROOT, file)}: the product keys (use PRODUCT_KEYS)`);
      }
      return found;
    });
    expect(again).toEqual([]);
  });
});
