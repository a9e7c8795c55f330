/**
 * The API reference page (`/api/v1/docs/`): the API document as one HTML page the gateway renders once, with no
 * script, so the browser shows it as it arrives. Swagger UI took 11 to 19 s to draw the 600 KB document (its
 * OpenAPI 3.1 parser reads every schema before it draws anything); this page draws its first section in well under a
 * second (docs/benchmarks.md, "The API reference"). Every section lists its operations at once, each opening to its
 * requirements, parameters, body and answers when clicked (`<details>`); the schemas follow, open, so that a link to
 * one lands on it. Swagger UI stays at `/api/v1/docs/swagger/` for trying calls from the browser.
 */

type Json = Record<string, any>;

interface ApiDocument {
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, Json> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

const escape = (text: unknown): string =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A description's inline `code`, as the document writes it, and nothing else of markdown. */
const prose = (text: unknown): string => escape(text ?? '').replace(/`([^`]+)`/g, '<code>$1</code>');

const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
const schemaId = (name: string) => `schema-${slug(name)}`;
const refName = (ref: string) => ref.replace('#/components/schemas/', '');

/** Bounds worth saying of a value (lengths, ranges), skipping the int64 range every integer carries. */
function bounds(s: Json): string {
  const said: string[] = [];
  if (s.minLength !== undefined) said.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined) said.push(`at most ${s.maxLength} characters`);
  if (s.minimum !== undefined && Math.abs(s.minimum) < 2 ** 53 - 1) said.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined && Math.abs(s.maximum) < 2 ** 53 - 1) said.push(`≤ ${s.maximum}`);
  if (s.maxItems !== undefined) said.push(`at most ${s.maxItems} items`);
  return said.join(', ');
}

/** A schema's type in words, schemas by name linked to their entry, an inline object's properties as a table. */
function typeOf(s: Json | undefined, depth = 0): string {
  if (!s || typeof s !== 'object' || Object.keys(s).length === 0) return 'any';
  if (s.$ref) {
    const name = refName(s.$ref);
    return `<a href="#${schemaId(name)}">${escape(name)}</a>`;
  }
  const union = s.anyOf ?? s.oneOf;
  if (Array.isArray(union)) return union.map((u: Json) => typeOf(u, depth)).join(' | ');
  if (Array.isArray(s.allOf)) return s.allOf.map((u: Json) => typeOf(u, depth)).join(' &amp; ');
  if (s.const !== undefined) return `<code>${escape(JSON.stringify(s.const))}</code>`;
  if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => `<code>${escape(JSON.stringify(v))}</code>`).join(' | ');
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : [];
  return (
    types
      .map((t) => {
        if (t === 'array') return `${typeOf(s.items, depth)}[]`;
        if (t === 'object' && s.properties && depth < 4) return `object${properties(s, depth + 1)}`;
        if (t === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object')
          return `map of string to ${typeOf(s.additionalProperties, depth)}`;
        return escape(s.format ? `${t} (${s.format})` : t);
      })
      .join(' | ') || 'any'
  );
}

/** An object schema's properties: name (required ones marked), type, description and bounds. */
function properties(s: Json, depth = 0): string {
  const required = new Set<string>(s.required ?? []);
  const rows = Object.entries<Json>(s.properties ?? {}).map(([name, p]) => {
    const about = [p.description && prose(p.description), bounds(p) && escape(bounds(p))].filter(Boolean).join('; ');
    return `<tr><td><code>${escape(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ''}</td><td>${typeOf(p, depth)}</td><td>${about}</td></tr>`;
  });
  if (rows.length === 0) return '';
  return `<table class="props"><thead><tr><th>field</th><th>type</th><th>about</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** A schema where it is used: a named one by link, an inline object as its table. */
const shape = (s: Json | undefined): string => (s && !s.$ref && s.properties ? properties(s) : `<p>${typeOf(s)}</p>`);

function parametersOf(op: Json): string {
  const params: Json[] = op.parameters ?? [];
  if (params.length === 0) return '';
  const rows = params.map((p) => {
    const about = [p.description && prose(p.description), p.schema && bounds(p.schema) && escape(bounds(p.schema))]
      .filter(Boolean)
      .join('; ');
    return `<tr><td><code>${escape(p.name)}</code>${p.required ? ' <span class="req">required</span>' : ''}</td><td>${escape(p.in)}</td><td>${typeOf(p.schema)}</td><td>${about}</td></tr>`;
  });
  return `<h4>Parameters</h4><table class="props"><thead><tr><th>name</th><th>in</th><th>type</th><th>about</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function bodyOf(op: Json): string {
  const content: Record<string, Json> | undefined = op.requestBody?.content;
  if (!content) return '';
  return Object.entries(content)
    .map(([type, c]) => `<h4>Body <code>${escape(type)}</code></h4>${shape(c.schema)}`)
    .join('');
}

/** The success answers with their schemas; the error answers as one list (their body is always the Error schema). */
function answersOf(op: Json): string {
  const answers = Object.entries<Json>(op.responses ?? {});
  const ok = answers.filter(([status]) => Number(status) < 400);
  const errors = answers.filter(([status]) => Number(status) >= 400);
  const success = ok
    .map(([status, r]) => {
      const content = Object.entries<Json>(r.content ?? {});
      const headers = Object.entries<Json>(r.headers ?? {}).map(([h, d]) => `<li><code>${escape(h)}</code>: ${prose(d.description)}</li>`);
      return (
        `<h4>${escape(status)} ${prose(r.description)}</h4>` +
        content.map(([type, c]) => `<p class="muted"><code>${escape(type)}</code></p>${shape(c.schema)}`).join('') +
        (headers.length ? `<ul>${headers.join('')}</ul>` : '')
      );
    })
    .join('');
  const failing = errors.length
    ? `<h4>Errors (<a href="#${schemaId('Error')}">Error</a>)</h4><ul class="errors">${errors
        .map(([status, r]) => `<li><strong>${escape(status)}</strong> ${prose(r.description)}</li>`)
        .join('')}</ul>`
    : '';
  return success + failing;
}

/** Who may call: the token scope, and the requirements the gateway checks before and after reading the request. */
function accessOf(op: Json): string {
  const lines: string[] = [];
  const security: string[] = [...new Set<string>((op.security ?? []).flatMap((s: Json) => Object.keys(s)))];
  lines.push(`<li>Credentials: ${security.length ? security.map((s) => `<code>${escape(s)}</code>`).join(', ') : 'none'}</li>`);
  if (op['x-token-scope']) lines.push(`<li>Token scope: <code>${escape(op['x-token-scope'])}</code></li>`);
  const list = (label: string, items: unknown) =>
    Array.isArray(items) && items.length && lines.push(`<li>${label}: ${items.map((i) => prose(i)).join('; ')}</li>`);
  list('Requires', op['x-requires']);
  list('Then checks', op['x-checks']);
  if (op['x-gives']) lines.push(`<li>Gives: ${prose(op['x-gives'])} (the caller must hold all of it)</li>`);
  if (op['x-gate']) lines.push(`<li>Served on: ${escape(op['x-gate'])} deployments</li>`);
  if (op['x-backend']) lines.push(`<li>Answered by: ${escape(op['x-backend'])}</li>`);
  return `<ul class="access">${lines.join('')}</ul>`;
}

function operation(path: string, method: string, op: Json): string {
  const id = escape(op.operationId ?? `${method}-${slug(path)}`);
  return (
    `<details class="op" id="${id}"><summary><span class="method ${method}">${method.toUpperCase()}</span> <code class="path">${escape(path)}</code> <span class="summary">${prose(op.summary ?? '')}</span></summary>` +
    `<div class="body"><p class="muted">operationId <code>${id}</code> · <a href="#${id}">link</a></p>${accessOf(op)}${parametersOf(op)}${bodyOf(op)}${answersOf(op)}</div></details>`
  );
}

/** The reference page of `doc`: its sections (tags) with their operations, then its schemas. */
export function renderReference(doc: ApiDocument, links: { document: string; swagger: string }): string {
  const byTag = new Map<string, [string, string, Json][]>();
  for (const [path, ops] of Object.entries(doc.paths))
    for (const method of METHODS) {
      const op = ops[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), [path, method, op]]);
    }
  const tags = [
    ...(doc.tags ?? []).filter((t) => byTag.has(t.name)),
    ...[...byTag.keys()].filter((t) => !doc.tags?.some((d) => d.name === t)).map((name) => ({ name, description: '' })),
  ];
  const contents = tags
    .map((t) => `<li><a href="#tag-${slug(t.name)}">${escape(t.name)}</a> <span class="muted">${byTag.get(t.name)!.length}</span></li>`)
    .join('');
  const sections = tags
    .map(
      (t) =>
        `<section id="tag-${slug(t.name)}"><h2>${escape(t.name)}</h2>${t.description ? `<p>${prose(t.description)}</p>` : ''}${byTag
          .get(t.name)!
          .map(([path, method, op]) => operation(path, method, op))
          .join('')}</section>`,
    )
    .join('');
  const schemas = Object.entries(doc.components?.schemas ?? {})
    .map(
      ([name, s]) =>
        // Always open: a link to a schema lands on it (a browser does not open a closed <details> it is sent to).
        `<div class="schema" id="${schemaId(name)}"><h3><code>${escape(name)}</code>${s.description ? ` <span class="summary">${prose(s.description)}</span>` : ''}</h3>${shape(s)}</div>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(doc.info.title)} ${escape(doc.info.version)}</title>
<style>${REFERENCE_STYLE}</style>
</head>
<body>
<header><h1>${escape(doc.info.title)} <span class="muted">${escape(doc.info.version)}</span></h1>
${doc.info.description ? `<p>${prose(doc.info.description)}</p>` : ''}
<p>Every path is under <code>/api/v1</code>. The document itself: <a href="${escape(links.document)}">openapi.json</a> (OpenAPI 3.1). To try calls from the browser: <a href="${escape(links.swagger)}">Swagger UI</a> (it reads the whole document first, which takes a while).</p>
<nav aria-label="Sections"><ul class="contents">${contents}<li><a href="#schemas">Schemas</a> <span class="muted">${Object.keys(doc.components?.schemas ?? {}).length}</span></li></ul></nav>
</header>
<main>${sections}<section id="schemas"><h2>Schemas</h2>${schemas}</section></main>
</body>
</html>
`;
}

/** The page's one stylesheet, inline (the page's policy allows exactly it, by hash). */
export const REFERENCE_STYLE = `
:root { color-scheme: light; font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; color: #1d2330; background: #f6f7f9; }
body { margin: 0 auto; max-width: 1200px; padding: 1rem 1.25rem 3rem; }
h1 { font-size: 1.5rem; margin: .5rem 0; } h2 { font-size: 1.25rem; margin: 1.75rem 0 .5rem; } h4 { margin: .9rem 0 .3rem; font-size: .95rem; }
a { color: #2f6fdb; } code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
.muted { color: #5b6475; }
.contents { display: flex; flex-wrap: wrap; gap: .25rem 1rem; padding: 0; list-style: none; }
details { background: #fff; border: 1px solid #d9dee7; border-radius: 6px; margin: .3rem 0; }
summary { cursor: pointer; padding: .45rem .75rem; display: flex; flex-wrap: wrap; gap: .5rem; align-items: baseline; }
summary::before { content: '▸'; color: #5b6475; } details[open] > summary::before { content: '▾'; }
details .body { padding: 0 .9rem .75rem; border-top: 1px solid #eef0f4; overflow-x: auto; }
.schema { background: #fff; border: 1px solid #d9dee7; border-radius: 6px; margin: .5rem 0; padding: .25rem .9rem .6rem; overflow-x: auto; }
.schema h3 { font-size: 1rem; margin: .4rem 0; display: flex; flex-wrap: wrap; gap: .5rem; align-items: baseline; }
.method { display: inline-block; min-width: 4.2rem; text-align: center; font-weight: 600; font-size: .8rem; border-radius: 4px; padding: .1rem .35rem; color: #fff; }
.get { background: #2f6fdb; } .post { background: #1a7f37; } .put { background: #9a6700; } .patch { background: #8250df; } .delete { background: #b42318; }
.path { font-weight: 600; } .summary { color: #3d4657; }
table.props { border-collapse: collapse; width: 100%; margin: .25rem 0; font-size: .9rem; }
.props th, .props td { text-align: left; vertical-align: top; border-bottom: 1px solid #eef0f4; padding: .25rem .5rem .25rem 0; }
.props .props { margin-left: .5rem; }
.req { color: #b42318; font-size: .75rem; }
ul.access, ul.errors { margin: .25rem 0; padding-left: 1.25rem; }
`;
