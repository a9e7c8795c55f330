import * as fs from 'node:fs';
import * as path from 'node:path';
import { TypeSystem } from './engine/model';
import { PERMISSIONS, permissionCatalog, SITE_OBJECT, type Permission } from './permissions';
import { RelationNames } from './relation-names';
import { OBJECT_TYPES, reportedRelations } from './roles/allowed-permissions';

/** The command that rewrites docs/permissions.md; the staleness test names it. */
export const REGENERATE_COMMAND = 'npx tsx --tsconfig tsconfig.base.json apps/authz/src/catalog-doc.ts';

/** docs/permissions.md, found by walking up to the workspace root (the directory holding nx.json). */
export function permissionsDocPath(start: string = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'nx.json'))) return path.join(dir, 'docs', 'permissions.md');
    if (path.dirname(dir) === dir) throw new Error('workspace root (nx.json) not found');
  }
}

const cell = (s: string) => s.replace(/\|/g, '\\|');
const code = (s: string) => `\`${s}\``;
const where = (p: Permission) =>
  p.objectType === 'site' ? `${code(SITE_OBJECT)} ${code(p.relation)}` : code(`${p.objectType}#${p.relation}`);

/**
 * The role and permission catalog as Markdown, from the same table (permissions.ts) and model
 * (model/platform.fga) the authz service uses. Deterministic: the same inputs give the same bytes.
 */
export function renderPermissionsDoc(model: TypeSystem = TypeSystem.fromFile()): string {
  const out: string[] = [];
  out.push(
    '# Permissions and the custom-role catalog',
    '',
    '<!-- GENERATED from apps/authz/src/permissions.ts and apps/authz/model/platform.fga; do not edit by hand. -->',
    `<!-- Regenerate: ${REGENERATE_COMMAND} -->`,
    '',
    'Generated from the permission table the authz service checks with (`apps/authz/src/permissions.ts`) and the',
    'authorization model (`apps/authz/model/platform.fga`). Regenerate after changing either:',
    '',
    '```sh',
    REGENERATE_COMMAND,
    '```',
    '',
    '`apps/authz/src/catalog-doc.test.ts` fails while this file is out of date. How custom roles use the catalog:',
    '[custom-roles.md](custom-roles.md).',
    '',
  );

  const catalog = permissionCatalog();
  const byKey = new Map(PERMISSIONS.map((p) => [`${p.namespace}/${p.action}`, p]));
  out.push(
    '## The catalog: permissions a custom role may carry',
    '',
    `\`GET /authz/roles/available_permissions\` answers exactly these ${catalog.length} entries, in this order; they are the`,
    '`{namespace, action}` pairs a role’s `permissions` accept (anything else is 400). A role grants each as the',
    'organization relation in the last column (`role:<id>#assignee <relation> organization:<org>`), so one role',
    'covers every team, role, cluster and contract of its organization. "Needs" lists associated permissions',
    '(required ones are needed for the permission to be of use; `(optional)` ones are not).',
    '',
    '| namespace | action | description | needs | checked as | role grants |',
    '|---|---|---|---|---|---|',
  );
  for (const c of catalog) {
    const p = byKey.get(`${c.namespace}/${c.action}`)!;
    const needs = (c.associated ?? []).map((a) => `${code(`${a.action}:${a.namespace}`)}${a.required ? '' : ' (optional)'}`).join(', ');
    out.push(
      `| ${code(c.namespace)} | ${code(c.action)} | ${cell(c.description)} | ${needs || '—'} | ${where(p)} | ${code(`organization#${p.grant!}`)} |`,
    );
  }
  out.push('');

  const fixed = PERMISSIONS.filter((p) => !p.assignable);
  out.push(
    '## Permissions no role can carry',
    '',
    'Checked by routes but never assignable: site administration (held by site admins, `user:<id> admin site:platform`),',
    'organization deletion and membership (owners and members only), and the team actions that act on oneself.',
    '',
    '| permission | checked as | description |',
    '|---|---|---|',
    ...fixed.map((p) => `| ${code(p.name)} | ${where(p)} | ${cell(p.description)} |`),
    '',
  );

  out.push(
    '## Every permission name',
    '',
    'The `action:object` names of the spec’s route descriptions (and the client-organization ones), as the gateway',
    'route table names them, with the object type and relation the authz service checks.',
    '',
    '| permission | checked as | assignable |',
    '|---|---|---|',
    ...PERMISSIONS.map((p) => `| ${code(p.name)} | ${where(p)} | ${p.assignable ? 'yes' : 'no'} |`),
    '',
  );

  const names = new RelationNames(model);
  out.push(
    '## Relation names in authorization questions',
    '',
    'Where a question names a relation (`Check`, `BatchCheck`, `ListRelations`, `ListObjects`, `ListUsers`, `Expand`',
    'over gRPC, [grpc.md](grpc.md)), it may name it as the model does or as the console and the catalog name the',
    'permission: every name of the table above is read, on an object of its type, as the relation it is checked as',
    '(`view_contracts:contract_mgmt` on an organization is `view_contracts_mgmt`), and so is the catalog’s action',
    'alone when one permission of that type has it. A relation of the model always means itself',
    '(`view_contracts` on `site:platform` is the site’s own relation). The actions read on each type:',
    '',
    '| on | name | asked as |',
    '|---|---|---|',
    ...names.types().flatMap((type) =>
      names
        .namesOn(type)
        .filter(([name, read]) => !('permission' in read && read.permission.name === name))
        .map(([name, read]) =>
          'relation' in read
            ? `| ${code(type)} | ${code(name)} | ${code(read.relation)} (${code(read.permission.name)}) |`
            : `| ${code(type)} | ${code(name)} | ambiguous (INVALID_ARGUMENT): name one of ${read.ambiguous.map((p) => code(p.name)).join(', ')} |`,
        ),
    ),
    '',
  );

  out.push(
    '## What allowed-permissions reports',
    '',
    '`/authz/objects/.../allowed-permissions` answers, for each object, which of these relations of its type the',
    'caller holds (in this order). They are every relation of the model type a user can hold; the links between',
    'objects (`team#organization`, `organization#site`) are left out. `user` has no relations in the model, so the',
    'caller’s own user object always answers an empty list.',
    '',
    '| objectType | relations |',
    '|---|---|',
    ...OBJECT_TYPES.map((t) => {
      const rels = reportedRelations(model, t);
      return `| ${code(t)} | ${rels.length ? rels.map(code).join(', ') : '(none)'} |`;
    }),
    '',
  );
  return out.join('\n');
}

/** libs/proto/src/permissions.ts: the permission names by object type, for callers that check them (the gateway). */
export function permissionTypesPath(start: string = __dirname): string {
  return path.join(path.dirname(permissionsDocPath(start)), '..', 'libs', 'proto', 'src', 'permissions.ts');
}

/**
 * The permission names and the object type each is checked on, as TypeScript: the gateway's route rows name
 * permissions with these types, so a check of `view:team` against an organization cannot compile.
 */
export function renderPermissionTypes(): string {
  // Quoted only where a name is not an identifier, as prettier writes object keys.
  const key = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : `'${name}'`);
  const rows = PERMISSIONS.map((p) => `  ${key(p.name)}: '${p.objectType}',`);
  return [
    '// GENERATED from apps/authz/src/permissions.ts; do not edit by hand.',
    `// Regenerate: ${REGENERATE_COMMAND}`,
    '',
    '/** Every permission name the authz service checks, and the object type it is checked on. */',
    'export const PERMISSION_OBJECT_TYPES = {',
    ...rows,
    '} as const;',
    '',
    '/** A permission name of the authz catalog. */',
    'export type PermissionName = keyof typeof PERMISSION_OBJECT_TYPES;',
    '',
    '/** The object types permissions are checked on. */',
    'export type PermissionObjectType = (typeof PERMISSION_OBJECT_TYPES)[PermissionName];',
    '',
    '/** The permission names checked on objects of type T. */',
    'export type PermissionOn<T extends PermissionObjectType> = {',
    '  [K in PermissionName]: (typeof PERMISSION_OBJECT_TYPES)[K] extends T ? K : never;',
    '}[PermissionName];',
    '',
  ].join('\n');
}

if (require.main === module) {
  for (const [file, text] of [
    [permissionsDocPath(), renderPermissionsDoc()],
    [permissionTypesPath(), renderPermissionTypes()],
  ]) {
    fs.writeFileSync(file, text);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}
