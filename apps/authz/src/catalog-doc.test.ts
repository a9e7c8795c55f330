import * as fs from 'node:fs';
import { permissionCatalog, PERMISSIONS } from './permissions';
import { permissionsDocPath, REGENERATE_COMMAND, renderPermissionsDoc } from './catalog-doc';

describe('docs/permissions.md, the generated role and permission catalog', () => {
  const rendered = renderPermissionsDoc();

  it('is up to date with permissions.ts and the model', () => {
    const onDisk = fs.existsSync(permissionsDocPath()) ? fs.readFileSync(permissionsDocPath(), 'utf8') : '(missing)';
    if (onDisk !== rendered) {
      throw new Error(`docs/permissions.md is stale: regenerate it with\n\n  ${REGENERATE_COMMAND}\n`);
    }
  });

  it('lists every catalog entry and every permission name', () => {
    for (const c of permissionCatalog()) expect(rendered).toContain(`| \`${c.namespace}\` | \`${c.action}\` | ${c.description} |`);
    for (const p of PERMISSIONS) expect(rendered).toContain(`| \`${p.name}\` |`);
  });

  it('renders the same bytes every time', () => {
    expect(renderPermissionsDoc()).toBe(rendered);
  });
});
