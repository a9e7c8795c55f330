import * as fs from 'node:fs';
import { permissionCatalog, PERMISSIONS } from './permissions';
import { permissionsDocPath, permissionTypesPath, REGENERATE_COMMAND, renderPermissionsDoc, renderPermissionTypes } from './catalog-doc';

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

describe('libs/proto/src/permissions.ts, the generated permission names by object type', () => {
  it('is up to date with permissions.ts', () => {
    const onDisk = fs.existsSync(permissionTypesPath()) ? fs.readFileSync(permissionTypesPath(), 'utf8') : '(missing)';
    if (onDisk !== renderPermissionTypes()) {
      throw new Error(`libs/proto/src/permissions.ts is stale: regenerate it with\n\n  ${REGENERATE_COMMAND}\n`);
    }
  });

  it('names every permission with its object type', () => {
    for (const p of PERMISSIONS) expect(renderPermissionTypes()).toMatch(new RegExp(`^  '?${p.name}'?: '${p.objectType}',$`, 'm'));
  });
});
