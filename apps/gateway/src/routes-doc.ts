import * as fs from 'node:fs';
import * as path from 'node:path';
import { operationIdOf, TAG_LIST } from './api-names';
import { requirementsOf } from './openapi';
import type { Route } from './route';
import { ROUTES } from './sections';

/** The command that rewrites docs/routes.md; the freshness test names it. */
export const REGENERATE_ROUTES_COMMAND = 'npx tsx --tsconfig tsconfig.base.json apps/gateway/src/routes-doc.ts';

/** docs/routes.md, found by walking up to the workspace root (the directory holding nx.json). */
export function routesDocPath(start: string = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'nx.json'))) return path.join(dir, 'docs', 'routes.md');
    if (path.dirname(dir) === dir) throw new Error('workspace root (nx.json) not found');
  }
}

const cell = (s: string) => s.replace(/\|/g, '\\|');
/** Who may call, as a cell: the auth mode, the `org` context and every requirement. */
function who(r: Route): string {
  const parts: string[] = [r.auth === 'public' ? 'anyone' : r.auth === 'basic' ? 'HTTP Basic' : 'token'];
  if (r.auth !== 'basic') parts.push(`scope \`${r.scope}\``);
  if (r.uses?.length) parts.push(`also ${r.uses.map((s) => `\`${s}\``).join(', ')} tokens`);
  if (r.org) parts.push(`\`org\` ${r.org}`);
  parts.push(...requirementsOf(r, (name) => `\`${name}\``));
  if (r.gives) parts.push(`gives: ${r.gives.describe}`);
  return parts.map(cell).join('; ');
}

/** The error answers the row documents besides those its declarations give, as a cell. */
const errors = (r: Route) => cell((r.errors ?? []).map((e) => `${e.status} ${e.description}`).join('; '));

/** The route table as Markdown, from the rows themselves. Deterministic: the same rows give the same bytes. */
export function renderRoutesDoc(routes: Route[] = ROUTES): string {
  const out = [
    '# Routes of /api/v1',
    '',
    '<!-- GENERATED from the gateway route rows (apps/gateway/src/sections); do not edit by hand. -->',
    `<!-- Regenerate: ${REGENERATE_ROUTES_COMMAND} -->`,
    '',
    'Every route the gateway serves, from the same rows that serve it. **Who** lists the authentication, the `org`',
    'query context and the authorization requirements the edge checks (site requirements before `org` is resolved,',
    'then the rest in the order the edge checks them, those on the query and body last; `gives:` names what a request',
    'gives, every permission of which the caller must hold). **Errors**: the answers a route documents besides those',
    'every route may give (400 for a bad path, query or body, 401, 403 for a requirement, 503 and 504).',
    '**Gate**: the deployments the route exists on (elsewhere 404). The schemas of every parameter,',
    'body and answer are in the API document (`/api/v1/openapi.json`, browsable at `/api/v1/docs/`).',
    '',
  ];
  for (const tag of TAG_LIST) {
    const rows = routes.filter((r) => r.tag === tag.name);
    if (rows.length === 0) continue;
    out.push(
      `## ${tag.name}`,
      '',
      `${tag.description}.`,
      '',
      '| method | path | operation | who | success | errors | backend | gate | summary |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of rows) {
      const p = r.path.replace(/[:*]([A-Za-z_]+)/g, '{$1}');
      out.push(
        `| ${r.method.toUpperCase()} | \`${p}\` | \`${operationIdOf(r)}\` | ${who(r)} | ${r.response.status} | ${errors(r)} | ${r.backend} | ${r.gate ?? 'all'} | ${cell(r.summary)} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}

if (require.main === module) {
  fs.writeFileSync(routesDocPath(), renderRoutesDoc());
  console.log(`wrote ${path.relative(process.cwd(), routesDocPath())}`);
}
