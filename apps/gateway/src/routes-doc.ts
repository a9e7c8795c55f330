import * as fs from 'node:fs';
import * as path from 'node:path';
import { operationIdOf, TAG_LIST } from './api-names';
import { requirementsOf } from './openapi';
import type { Route } from './route';
import { routeSources, type RouteSource } from './route-sources';
import { ROUTES } from './sections';

/** The command that rewrites docs/routes.md; the freshness test names it. */
export const REGENERATE_ROUTES_COMMAND = 'npx tsx --tsconfig tsconfig.base.json apps/gateway/src/routes-doc.ts';

/** The workspace root: the directory holding nx.json, above `start`. */
function workspaceRoot(start: string = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'nx.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error('workspace root (nx.json) not found');
  }
}

/** docs/routes.md, found by walking up to the workspace root (the directory holding nx.json). */
export function routesDocPath(start: string = __dirname): string {
  return path.join(workspaceRoot(start), 'docs', 'routes.md');
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

/** The gRPC methods the handler may call, as a cell: `Service.Method`, kept reads marked. */
const grpc = (s: RouteSource) => (s.calls.length ? s.calls.map((c) => c.replace(/^(\S+)( \(kept\))?$/, '`$1`$2')).join(', ') : 'none');

/** The file declaring the row, as a link from docs/ whose text is its path from the workspace root. */
const source = (s: RouteSource) => `[${s.file}](../${s.file})`;

/** The route table as Markdown, from the rows themselves. Deterministic: the same rows give the same bytes. */
export function renderRoutesDoc(routes: Route[] = ROUTES): string {
  const sources = routeSources(routes, workspaceRoot());
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
    '**gRPC**: the methods of the backends the handler may call, read from its source (every branch counts, unless the',
    "row's own factory arguments decide it); *(kept)* marks a read served from the gateway's copy of the owner's read",
    'model, which asks the backend only when it holds no answer. The lookup of the target and the authorization checks',
    'the edge makes before the handler are not listed; **none**: the handler answers from what the edge resolved.',
    '**Source**: the file declaring the row, from the workspace root (apps/gateway/src/route-sources.ts reads both).',
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
      '| method | path | operation | who | success | errors | backend | gRPC | gate | summary | source |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of rows) {
      const p = r.path.replace(/[:*]([A-Za-z_]+)/g, '{$1}');
      out.push(
        `| ${r.method.toUpperCase()} | \`${p}\` | \`${operationIdOf(r)}\` | ${who(r)} | ${r.response.status} | ${errors(r)} | ${r.backend} | ${grpc(sources.get(r)!)} | ${r.gate ?? 'all'} | ${cell(r.summary)} | ${source(sources.get(r)!)} |`,
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
