import * as fs from 'node:fs';
import * as path from 'node:path';
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
const SECTION_NAMES: Record<Route['section'], string> = {
  '4.1': '4.1 Authorization and custom roles',
  '4.2': '4.2 Client organizations',
  '4.3': '4.3 Contracts, admin',
  '4.4': '4.4 Contracts, user',
  '4.5': '4.5 Usage reports',
  '4.6': '4.6 Admin billing dashboard',
  '4.7': '4.7 Metrics proxy',
  '4.8': '4.8 Site settings',
  '4.10': '4.10 Metered-billing proxy',
  '4.11': '4.11 License registration',
  '4.12': '4.12 Cluster sets and feature sets',
  '4.13': '4.13 Organizations',
  '4.14': '4.14 Teams',
  '9': '9 Version',
  beyond: 'Beyond the spec (identity, signed objects, cluster enrollment, the license CRL and CA)',
};

/** Who may call, as a cell: the auth mode, the `org` context and every requirement. */
function who(r: Route): string {
  const parts: string[] = [r.auth === 'public' ? 'anyone' : r.auth === 'basic' ? 'HTTP Basic' : 'token'];
  if (r.scopes?.length) parts.push(`also ${r.scopes.map((s) => `\`${s}\``).join(', ')} tokens`);
  if (r.org) parts.push(`\`org\` ${r.org}`);
  parts.push(...requirementsOf(r).map((q) => `\`${q.permission}\` on ${q.on}`));
  if (r.gives) parts.push(`gives: ${r.gives.describe}`);
  parts.push(...(r.handlerChecks ?? []).map((c) => `handler: ${c}`));
  return parts.map(cell).join('; ');
}

/** The route table as Markdown, from the rows themselves. Deterministic: the same rows give the same bytes. */
export function renderRoutesDoc(routes: Route[] = ROUTES): string {
  const out = [
    '# Routes of /api/v1',
    '',
    '<!-- GENERATED from the gateway route rows (apps/gateway/src/sections); do not edit by hand. -->',
    `<!-- Regenerate: ${REGENERATE_ROUTES_COMMAND} -->`,
    '',
    'Every route the gateway serves, from the same rows that serve it. **Who** lists the authentication, the `org`',
    'query context and the authorization requirements the edge checks (in this order; `gives:` names what a request',
    'gives, every permission of which the caller must hold), then the checks a handler makes on data only it has.',
    '**Gate**: the deployments the route exists on (spec section 1; elsewhere 404). The schemas of every parameter,',
    'body and answer are in the API document (`/api/v1/openapi.json`, browsable at `/api/v1/docs/`).',
    '',
  ];
  for (const section of Object.keys(SECTION_NAMES) as Route['section'][]) {
    const rows = routes.filter((r) => r.section === section);
    if (rows.length === 0) continue;
    out.push(
      `## ${SECTION_NAMES[section]}`,
      '',
      '| method | path | who | success | backend | gate | summary |',
      '|---|---|---|---|---|---|---|',
    );
    for (const r of rows) {
      const p = r.path.replace(/[:*]([A-Za-z_]+)/g, '{$1}');
      out.push(
        `| ${r.method.toUpperCase()} | \`${p}\` | ${who(r)} | ${r.response.status} | ${r.backend} | ${r.gate ?? 'all'} | ${cell(r.summary)} |`,
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
