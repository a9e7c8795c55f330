import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import * as proto from '@platform/proto';
import type { Route } from './route';

/**
 * Where each route row is declared and which gRPC methods its handler calls, read from the gateway's sources for
 * docs/routes.md (routes-doc.ts). The sources are only parsed, never type-checked: it takes about a second.
 *
 * Where: every `route({...})` call of a maker `const route = sectionRoutes({...})` in the gateway is matched to the
 * rows by what it writes out (method, path, summary, tag, ...). A call inside a factory (`function memberAction(action)`,
 * `TEAM_ACTIONS.map(teamAction)`, `scopeRoutes({ path: ... })`) is read once per call of the factory, with that call's
 * arguments. A row that no call, or more than one, can have made is an error.
 *
 * Calls: the handler is followed from its context (`ctx`, or `{ backends, kept }`) through aliases
 * (`const { organizations } = ctx.backends.orgsTeams`), the gateway's helpers it hands them to (`createOrgFor(backends,
 * ...)`, `accountsOf(ctx, ...)`), what those return (a client), tables of functions (`OWNERS[prefix]`) and the
 * factory's arguments, down to the calls `<door>.<backend>.<service>.<method>(...)`, each checked against the
 * service's generated definition. A branch counts unless the factory's arguments decide it (`action === 'bind'` in the
 * `bind` row): a row lists every method its handler may call. Whatever the walk cannot follow (a backend handed to a
 * library function, put in an array, reached by a computed name, assigned to a variable) is an error naming the place,
 * so a list is never silently short. The edge's own calls (the target's lookup, the authorization checks) are not
 * the handler's and are not listed.
 */

/** What a row's declaration and handler say. */
export interface RouteSource {
  /** The file holding the row's `route({...})` call, relative to the workspace root. */
  file: string;
  /** `Service.Method` of every gRPC method the handler may call, sorted; kept reads (`ctx.kept`) end in ` (kept)`. */
  calls: string[];
}

/** Raised where the sources are not as this reading expects: the message names the place. */
export class RouteSourceError extends Error {}

type Door = 'backends' | 'kept';
type FnNode = ts.FunctionDeclaration | ts.FunctionExpression | ts.ArrowFunction | ts.MethodDeclaration | ts.AccessorDeclaration;
type Const = string | number | boolean | null | undefined;

/** What an expression may evaluate to, as far as the backends are concerned; a value is a union of these. */
type Val =
  | { k: 'opaque' }
  | { k: 'const'; value: Const }
  | { k: 'ctx' }
  | { k: 'door'; door: Door }
  | { k: 'app'; door: Door; app: string }
  | { k: 'client'; door: Door; app: string; client: string }
  | { k: 'method'; door: Door; app: string; client: string; method: string }
  | { k: 'fn'; node: FnNode; scope: Scope }
  | { k: 'obj'; id: number; props: Map<string, Val[]>; open: boolean }
  | { k: 'module'; file: string };
type FnVal = Extract<Val, { k: 'fn' }>;
type ObjVal = Extract<Val, { k: 'obj' }>;

const OPAQUE: Val[] = [{ k: 'opaque' }];
const constant = (value: Const): Val[] => [{ k: 'const', value }];

/** The fields of a handler's context (route.ts RouteContext) that lead to no backend. */
const CTX_PLAIN = new Set(['config', 'requestId', 'arrivedAt', 'req', 'caller', 'org', 'scope', 'forgetTokens', 'target', 'audit']);

/** A gRPC call as the handler makes it. */
interface Call {
  door: Door;
  app: string;
  client: string;
  method: string;
}

/** A name's value, computed when first looked up and kept with the calls computing it made. */
type Binding = { vals?: Val[]; thunk?: () => Val[]; calls?: Call[]; busy?: boolean };

class Scope {
  private static next = 0;
  readonly id = Scope.next++;
  readonly vars = new Map<string, Binding>();
  constructor(
    readonly parent: Scope | undefined,
    readonly module: ModuleInfo,
  ) {}
}

interface ModuleInfo {
  sf: ts.SourceFile;
  scope: Scope;
  /** Local name → the gateway file it is imported from (undefined: a package) and its name there. */
  imports: Map<string, { file: string | undefined; name: string }>;
  /** `export { a as b }`: exported name → local name. */
  exportAs: Map<string, string>;
  /** `export ... from`: the file, and the names (exported → its name there) unless all. */
  reexports: { file: string; names?: Map<string, string> }[];
}

/** An expression and the module it is written in. */
interface Written {
  init: ts.Expression;
  module: ModuleInfo;
}

/** What one call of the enclosing factories passes for their parameters (undefined: not known here). */
type Variant = Map<ts.ParameterDeclaration, Written | undefined>;

function where(node: ts.Node): string {
  const sf = node.getSourceFile();
  const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
  return `${sf.fileName}:${line + 1}`;
}

const isTracked = (vals: Val[], seen = new Set<number>()): boolean =>
  vals.some((v) => {
    if (v.k === 'ctx' || v.k === 'door' || v.k === 'app' || v.k === 'client' || v.k === 'method') return true;
    if (v.k !== 'obj' || seen.has(v.id)) return false;
    seen.add(v.id);
    return [...v.props.values()].some((p) => isTracked(p, seen));
  });

/** The one constant a value always is, if it is one. */
function single(vals: Val[]): { value: Const } | undefined {
  const first = vals[0];
  if (first?.k !== 'const' || !vals.every((v) => v.k === 'const' && v.value === first.value)) return undefined;
  return { value: first.value };
}

const stripped = (e: ts.Expression): ts.Expression =>
  ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isTypeAssertionExpression(e)
    ? stripped(e.expression)
    : e;

const boundNames = (name: ts.BindingName): string[] =>
  ts.isIdentifier(name) ? [name.text] : name.elements.flatMap((el) => (ts.isOmittedExpression(el) ? [] : boundNames(el.name)));

const isExported = (node: ts.Node) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

const isAssignment = (kind: ts.SyntaxKind) =>
  kind === ts.SyntaxKind.EqualsToken || (kind >= ts.SyntaxKind.FirstCompoundAssignment && kind <= ts.SyntaxKind.LastCompoundAssignment);

/** The names assigned to anywhere under a node (`x = `, `x += `, `x++`, `({ x } = ...)`): never taken as constants. */
const assignedCache = new WeakMap<ts.Node, Set<string>>();
function assignedUnder(node: ts.Node): Set<string> {
  let names = assignedCache.get(node);
  if (names) return names;
  const found = new Set<string>();
  const targets = (e: ts.Node) => {
    if (ts.isIdentifier(e)) found.add(e.text);
    else e.forEachChild(targets);
  };
  const visit = (n: ts.Node) => {
    if (ts.isBinaryExpression(n) && isAssignment(n.operatorToken.kind)) targets(n.left);
    if ((ts.isPrefixUnaryExpression(n) || ts.isPostfixUnaryExpression(n)) && ts.isIdentifier(n.operand)) {
      const op = n.operator;
      if (op === ts.SyntaxKind.PlusPlusToken || op === ts.SyntaxKind.MinusMinusToken) found.add(n.operand.text);
    }
    n.forEachChild(visit);
  };
  visit(node);
  names = found;
  assignedCache.set(node, names);
  return names;
}
/** The function (or file) a declaration belongs to, whose body may assign it. */
function owner(node: ts.Node): ts.Node {
  for (let n = node.parent; n; n = n.parent) if (ts.isFunctionLike(n) || ts.isSourceFile(n)) return n;
  return node.getSourceFile();
}
/** A value as a name holds it: a name assigned anywhere is no constant. */
const held = (vals: Val[], name: string, decl: ts.Node): Val[] =>
  vals.some((v) => v.k === 'const') && assignedUnder(owner(decl)).has(name)
    ? vals.map((v) => (v.k === 'const' ? { k: 'opaque' } : v))
    : vals;

/** The gRPC services of each backend app: `backends.<app>.<client>` → its generated service definition. */
function serviceDefinitions(root: string): Map<string, Map<string, Record<string, { path: string }>>> {
  const parse = (file: string) =>
    ts.createSourceFile(path.relative(root, file), fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const interfaceIn = (sf: ts.SourceFile, name: string) =>
    sf.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name);
  const members = (decl: ts.InterfaceDeclaration) =>
    decl.members.filter(ts.isPropertySignature).map((m) => [(m.name as ts.Identifier).text, m.type!] as const);

  const backendsSf = parse(path.join(root, 'apps/gateway/src/backends.ts'));
  const backends = interfaceIn(backendsSf, 'Backends');
  if (!backends) throw new RouteSourceError(`${backendsSf.fileName}: no interface Backends`);
  // The client libraries, by the names of the types the gateway imports from them.
  const libOf = new Map<string, string>();
  for (const s of backendsSf.statements) {
    if (!ts.isImportDeclaration(s) || !s.importClause?.namedBindings || !ts.isNamedImports(s.importClause.namedBindings)) continue;
    for (const e of s.importClause.namedBindings.elements) libOf.set(e.name.text, (s.moduleSpecifier as ts.StringLiteral).text);
  }
  const { compilerOptions } = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.base.json'), 'utf8'));
  const out = new Map<string, Map<string, Record<string, { path: string }>>>();
  for (const [app, type] of members(backends)) {
    const typeName = type.getText(backendsSf);
    const entry: string | undefined = compilerOptions.paths[libOf.get(typeName) ?? '']?.[0];
    if (!entry) throw new RouteSourceError(`${backendsSf.fileName}: Backends.${app} is ${typeName}, not a client library's`);
    const dir = path.join(root, path.dirname(entry));
    const found = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => parse(path.join(dir, f)))
      .map((sf) => ({ sf, decl: interfaceIn(sf, typeName) }))
      .find((x) => x.decl);
    if (!found) throw new RouteSourceError(`${path.relative(root, dir)}: no interface ${typeName}`);
    const clients = new Map<string, Record<string, { path: string }>>();
    for (const [client, clientType] of members(found.decl!)) {
      const m = /^PromiseClient<typeof (\w+)\.(\w+)>$/.exec(clientType.getText(found.sf));
      const definition = m && (proto as any)[m[1]]?.[m[2]];
      if (!definition)
        throw new RouteSourceError(`${found.sf.fileName}: ${typeName}.${client} is not PromiseClient<typeof <proto>.<Service>>`);
      clients.set(client, definition);
    }
    out.set(app, clients);
  }
  return out;
}

/** One route call as one call of its factories makes it, with what it writes out. */
interface Declared {
  file: string;
  call: ts.CallExpression;
  spec: ts.ObjectLiteralExpression;
  scope: Scope;
  /** What the fields say (undefined: anything), as patterns. */
  literal: Record<string, RegExp | undefined>;
}

/** The fields read to tell route calls apart. */
const STATIC_KEYS = ['method', 'path', 'summary', 'tag', 'backend', 'auth', 'scope', 'gate', 'org'] as const;

/** The sources of the rows: where each is declared, and the gRPC methods its handler may call. */
export function routeSources(routes: Route[], root: string): Map<Route, RouteSource> {
  const definitions = serviceDefinitions(root);
  const modules = new Map<string, ModuleInfo>();
  let nextObj = 0;

  // ---- modules ----
  const resolveFile = (from: string, spec: string): string | undefined => {
    if (!spec.startsWith('.')) return undefined;
    const base = path.resolve(path.dirname(from), spec);
    return [`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f));
  };
  function moduleOf(file: string): ModuleInfo {
    let m = modules.get(file);
    if (m) return m;
    const sf = ts.createSourceFile(path.relative(root, file), fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    m = { sf, scope: undefined as unknown as Scope, imports: new Map(), exportAs: new Map(), reexports: [] };
    m.scope = new Scope(undefined, m);
    modules.set(file, m);
    for (const s of sf.statements) {
      if (ts.isImportDeclaration(s)) {
        const from = resolveFile(file, (s.moduleSpecifier as ts.StringLiteral).text);
        const clause = s.importClause;
        if (clause?.name) m.imports.set(clause.name.text, { file: from, name: 'default' });
        const nb = clause?.namedBindings;
        if (nb && ts.isNamespaceImport(nb)) m.imports.set(nb.name.text, { file: from, name: '*' });
        if (nb && ts.isNamedImports(nb))
          for (const e of nb.elements) m.imports.set(e.name.text, { file: from, name: (e.propertyName ?? e.name).text });
      } else if (ts.isExportDeclaration(s)) {
        const from = s.moduleSpecifier && resolveFile(file, (s.moduleSpecifier as ts.StringLiteral).text);
        const names =
          s.exportClause && ts.isNamedExports(s.exportClause)
            ? new Map(s.exportClause.elements.map((e) => [e.name.text, (e.propertyName ?? e.name).text]))
            : undefined;
        if (from) m.reexports.push({ file: from, names });
        else for (const [exported, local] of names ?? []) m.exportAs.set(exported, local);
      }
    }
    declareAll(sf.statements, m.scope);
    return m;
  }
  /** The value a module exports under `name`. */
  function exported(m: ModuleInfo, name: string, at: ts.Node): Val[] {
    const local = m.exportAs.get(name) ?? name;
    if (m.scope.vars.has(local) || m.imports.has(local)) return lookup(local, m.scope, at);
    for (const r of m.reexports) {
      const inner = r.names ? r.names.get(name) : name;
      if (inner !== undefined && (r.names || exports(moduleOf(r.file), inner))) return exported(moduleOf(r.file), inner, at);
    }
    return OPAQUE;
  }
  const exports = (m: ModuleInfo, name: string): boolean =>
    m.scope.vars.has(m.exportAs.get(name) ?? name) ||
    m.reexports.some((r) => (r.names ? r.names.has(name) : exports(moduleOf(r.file), name)));

  // ---- calls recorded while walking: a computation kept for reuse keeps the calls it made, and makes them again ----
  const sinks: Call[][] = [];
  const record = (calls: Iterable<Call>) => {
    const sink = sinks[sinks.length - 1];
    if (sink) for (const c of calls) sink.push(c);
  };
  function recorded<T>(run: () => T): { value: T; calls: Call[] } {
    const calls: Call[] = [];
    sinks.push(calls);
    try {
      return { value: run(), calls };
    } finally {
      sinks.pop();
      record(calls);
    }
  }

  // ---- scopes: declarations are bound lazily, so a closure may name one declared after it ----
  function force(b: Binding): Val[] {
    if (b.vals) {
      record(b.calls ?? []);
      return b.vals;
    }
    if (b.busy) return OPAQUE;
    b.busy = true;
    const { value, calls } = recorded(b.thunk!);
    Object.assign(b, { vals: value, calls, busy: false });
    return value;
  }
  function lookup(name: string, scope: Scope, at: ts.Node): Val[] {
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      const b = s.vars.get(name);
      if (b) return force(b);
    }
    const imp = scope.module.imports.get(name);
    if (imp?.file) return imp.name === '*' ? [{ k: 'module', file: imp.file }] : exported(moduleOf(imp.file), imp.name, at);
    return name === 'undefined' ? constant(undefined) : OPAQUE; // a package's, or a global (Promise, Buffer, ...)
  }
  /** Declares the functions, variables and classes of a list of statements in `scope`. */
  function declareAll(statements: readonly ts.Statement[], scope: Scope) {
    for (const s of statements) {
      if (ts.isFunctionDeclaration(s) && s.name) {
        const node = s;
        scope.vars.set(s.name.text, { thunk: () => [{ k: 'fn', node, scope }] });
      } else if (ts.isClassDeclaration(s) && s.name) {
        scope.vars.set(s.name.text, { vals: OPAQUE });
      } else if (ts.isVariableStatement(s)) {
        for (const d of s.declarationList.declarations) declareVariable(d, scope);
      }
    }
  }
  function declareVariable(d: ts.VariableDeclaration, scope: Scope) {
    const init = d.initializer;
    const whole: Binding = { thunk: () => (init ? evaluate(init, scope) : constant(undefined)) };
    bindPattern(d.name, () => force(whole), scope, true, d);
  }
  /** Binds the names of a parameter or declaration to the parts of `value`. */
  function bindPattern(name: ts.BindingName, value: () => Val[], scope: Scope, lazy: boolean, decl: ts.Node) {
    if (ts.isIdentifier(name)) {
      const thunk = () => held(value(), name.text, decl);
      scope.vars.set(name.text, lazy ? { thunk } : { vals: thunk() });
      return;
    }
    for (const el of name.elements) {
      if (ts.isOmittedExpression(el)) continue;
      let part: () => Val[];
      if (ts.isArrayBindingPattern(name) || el.dotDotDotToken) {
        part = () => {
          const whole = value();
          if (isTracked(whole)) throw new RouteSourceError(`${where(el)}: a backend taken apart by position or rest; name its fields`);
          return OPAQUE;
        };
      } else {
        const key = el.propertyName ?? (el.name as ts.Identifier);
        if (!ts.isIdentifier(key) && !ts.isStringLiteral(key)) throw new RouteSourceError(`${where(el)}: a computed name in a binding`);
        part = () => prop(value(), key.text, el);
      }
      const withDefault = el.initializer ? () => [...part(), ...evaluate(el.initializer!, scope)] : part;
      bindPattern(el.name, withDefault, scope, lazy, decl);
    }
  }

  // ---- values ----
  function prop(vals: Val[], name: string, at: ts.Node): Val[] {
    return vals.flatMap((v): Val[] => {
      switch (v.k) {
        case 'opaque':
        case 'const':
          return OPAQUE;
        case 'ctx':
          if (name === 'backends' || name === 'kept') return [{ k: 'door', door: name }];
          if (CTX_PLAIN.has(name)) return OPAQUE;
          throw new RouteSourceError(`${where(at)}: the handler's context has no field ${name} this reading knows`);
        case 'door':
          if (!definitions.has(name)) throw new RouteSourceError(`${where(at)}: ${v.door}.${name}: no such backend`);
          return [{ k: 'app', door: v.door, app: name }];
        case 'app':
          if (!definitions.get(v.app)!.has(name)) throw new RouteSourceError(`${where(at)}: ${v.door}.${v.app}.${name}: no such service`);
          return [{ k: 'client', door: v.door, app: v.app, client: name }];
        case 'client':
          if (!Object.hasOwn(definitions.get(v.app)!.get(v.client)!, name))
            throw new RouteSourceError(`${where(at)}: ${v.door}.${v.app}.${v.client}.${name}: no such method`);
          return [{ k: 'method', door: v.door, app: v.app, client: v.client, method: name }];
        case 'method':
          throw new RouteSourceError(`${where(at)}: .${name} of a gRPC method; call it directly`);
        case 'fn':
          if (name === 'call' || name === 'apply' || name === 'bind')
            throw new RouteSourceError(`${where(at)}: .${name} of a function; call it directly`);
          return OPAQUE;
        case 'obj':
          return v.props.get(name) ?? OPAQUE;
        case 'module':
          return exported(moduleOf(v.file), name, at);
      }
    });
  }
  /** Fails when a backend (or the context holding them) would go where the walk cannot follow it. */
  function untracked(vals: Val[], at: ts.Node, what: string): void {
    if (isTracked(vals)) throw new RouteSourceError(`${where(at)}: a backend ${what}, where this reading cannot follow it`);
  }

  const analysed = new Map<string, { value: Val[]; calls: Call[] }>();
  /** The functions being walked (by function and scope), with the arguments they were called with. */
  const walking = new Map<string, string>();
  const fnIds = new Map<ts.Node, number>();
  const keyOf = (v: Val): string => {
    switch (v.k) {
      case 'fn':
        if (!fnIds.has(v.node)) fnIds.set(v.node, fnIds.size);
        return `f${fnIds.get(v.node)}@${v.scope.id}`;
      case 'obj':
        return `o${v.id}`;
      case 'module':
        return `m:${v.file}`;
      case 'const':
        return `c:${typeof v.value}:${String(v.value)}`;
      default:
        return Object.values(v).join(':');
    }
  };

  /** Calls a function with these arguments: walks its body, and answers what it returns. */
  function invoke(fn: FnVal, args: Val[][]): Val[] {
    const self = keyOf(fn);
    const key = `${self}(${args.map((a) => a.map(keyOf).join('|')).join(',')})`;
    const done = analysed.get(key);
    if (done) {
      record(done.calls);
      return done.value;
    }
    // A recursive call: its calls are the ones being walked, unless it hands the function a backend of its own.
    const outer = walking.get(self);
    if (outer !== undefined) {
      if (outer !== key && isTracked(args.flat())) throw new RouteSourceError(`${where(fn.node)}: a backend passed on recursively`);
      return OPAQUE;
    }
    walking.set(self, key);
    try {
      const result = recorded(() => {
        const scope = new Scope(fn.scope, fn.scope.module);
        fn.node.parameters.forEach((p, i) => {
          const arg = p.dotDotDotToken
            ? (untracked(args.slice(i).flat(), p, 'passed as a rest argument'), OPAQUE)
            : (args[i] ?? constant(undefined));
          bindPattern(p.name, () => (p.initializer ? [...arg, ...evaluate(p.initializer, scope)] : arg), scope, false, p);
        });
        const body = fn.node.body;
        if (!body) return OPAQUE;
        if (!ts.isBlock(body)) return evaluate(body, scope);
        const returns: Val[] = [];
        walkBlock(body.statements, scope, returns);
        return returns.length ? returns : constant(undefined);
      });
      analysed.set(key, result);
      return result.value;
    } finally {
      walking.delete(self);
    }
  }
  const unknownArgs = (fn: FnVal) => fn.node.parameters.map(() => OPAQUE);
  /** A function value made here; it is also walked as if called with unknown arguments, for what it captured. */
  function closure(node: FnNode, scope: Scope): Val[] {
    const fn: FnVal = { k: 'fn', node, scope };
    invoke(fn, unknownArgs(fn));
    return [fn];
  }
  function call(callee: Val[], args: Val[][], at: ts.CallExpression | ts.NewExpression): Val[] {
    const out: Val[] = [];
    for (const v of callee) {
      if (v.k === 'method') {
        record([{ door: v.door, app: v.app, client: v.client, method: v.method }]);
        args.forEach((a, i) => untracked(a, at.arguments![i] ?? at, 'passed to a gRPC method'));
        out.push(...OPAQUE);
      } else if (v.k === 'fn') {
        out.push(...invoke(v, args));
      } else if (v.k === 'ctx' || v.k === 'door' || v.k === 'app' || v.k === 'client') {
        throw new RouteSourceError(`${where(at)}: a backend called as a function`);
      } else {
        // A function this reading does not know (a package's, a global's): it may call the functions it is given.
        args.forEach((a, i) => {
          untracked(a, at.arguments![i] ?? at, `passed to ${at.expression.getText()}`);
          for (const f of a) if (f.k === 'fn') invoke(f, unknownArgs(f));
        });
        out.push(...OPAQUE);
      }
    }
    return out;
  }

  function evaluate(node: ts.Expression, scope: Scope): Val[] {
    if (ts.isIdentifier(node)) return lookup(node.text, scope, node);
    if (ts.isStringLiteralLike(node)) return constant(node.text);
    if (ts.isNumericLiteral(node)) return constant(Number(node.text));
    if (node.kind === ts.SyntaxKind.TrueKeyword) return constant(true);
    if (node.kind === ts.SyntaxKind.FalseKeyword) return constant(false);
    if (node.kind === ts.SyntaxKind.NullKeyword) return constant(null);
    if (
      ts.isParenthesizedExpression(node) ||
      ts.isAsExpression(node) ||
      ts.isTypeAssertionExpression(node) ||
      ts.isNonNullExpression(node) ||
      ts.isSatisfiesExpression(node) ||
      ts.isAwaitExpression(node)
    )
      return evaluate(node.expression, scope);
    if (ts.isPropertyAccessExpression(node)) return prop(evaluate(node.expression, scope), node.name.text, node);
    if (ts.isElementAccessExpression(node)) {
      const of = evaluate(node.expression, scope);
      const key = single(evaluate(node.argumentExpression, scope));
      const notTable = of.filter((v) => v.k !== 'obj' && v.k !== 'module');
      untracked(notTable, node, 'indexed');
      if (key) return prop(of, String(key.value), node);
      untracked(of, node, 'indexed by a computed name');
      return of.flatMap((v) => (v.k === 'obj' ? [...[...v.props.values()].flat(), ...(v.open ? OPAQUE : [])] : OPAQUE));
    }
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const callee = evaluate(node.expression, scope);
      const args = (node.arguments ?? []).map((a) =>
        ts.isSpreadElement(a) ? (untracked(evaluate(a.expression, scope), a, 'spread into a call'), OPAQUE) : evaluate(a, scope),
      );
      // `new` of a function of the gateway's: a class this reading does not follow, so an unknown callee.
      return call(ts.isNewExpression(node) ? [...callee.filter((v) => v.k !== 'fn'), ...OPAQUE] : callee, args, node);
    }
    if (ts.isConditionalExpression(node)) {
      const test = evaluate(node.condition, scope);
      untracked(test, node.condition, 'tested');
      const known = single(test);
      if (known) return evaluate(known.value ? node.whenTrue : node.whenFalse, scope);
      return [...evaluate(node.whenTrue, scope), ...evaluate(node.whenFalse, scope)];
    }
    if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken) {
      const operand = evaluate(node.operand, scope);
      untracked(operand, node, 'tested');
      const known = single(operand);
      return known ? constant(!known.value) : OPAQUE;
    }
    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      if (isAssignment(op)) {
        const right = evaluate(node.right, scope);
        untracked(right, node, 'assigned; bind it with const instead');
        if (!ts.isIdentifier(node.left)) untracked(evaluate(node.left, scope), node.left, 'assigned to');
        return right;
      }
      const left = evaluate(node.left, scope);
      if (op === ts.SyntaxKind.QuestionQuestionToken || op === ts.SyntaxKind.BarBarToken || op === ts.SyntaxKind.AmpersandAmpersandToken) {
        const known = single(left);
        if (known) {
          const takesLeft =
            op === ts.SyntaxKind.QuestionQuestionToken
              ? known.value !== null && known.value !== undefined
              : op === ts.SyntaxKind.BarBarToken
                ? !!known.value
                : !known.value;
          return takesLeft ? left : evaluate(node.right, scope);
        }
        return [...left, ...evaluate(node.right, scope)];
      }
      const right = evaluate(node.right, scope);
      untracked([...left, ...right], node, `an operand of ${node.operatorToken.getText()}`);
      const [a, b] = [single(left), single(right)];
      if (a && b) {
        if (op === ts.SyntaxKind.EqualsEqualsEqualsToken) return constant(a.value === b.value);
        if (op === ts.SyntaxKind.ExclamationEqualsEqualsToken) return constant(a.value !== b.value);
      }
      return OPAQUE;
    }
    if (ts.isObjectLiteralExpression(node)) {
      const obj: ObjVal = { k: 'obj', id: nextObj++, props: new Map(), open: false };
      for (const p of node.properties) {
        const name =
          p.name && (ts.isIdentifier(p.name) || ts.isStringLiteralLike(p.name) || ts.isNumericLiteral(p.name)) ? p.name.text : undefined;
        let vals: Val[];
        if (ts.isPropertyAssignment(p)) vals = evaluate(p.initializer, scope);
        else if (ts.isShorthandPropertyAssignment(p)) vals = lookup(p.name.text, scope, p);
        else if (ts.isMethodDeclaration(p)) vals = closure(p, scope);
        else if (ts.isAccessor(p)) {
          closure(p, scope); // walked for what it may call; its value is not followed
          vals = OPAQUE;
        } else if (ts.isSpreadAssignment(p)) {
          const spread = evaluate(p.expression, scope);
          const unknown = spread.filter((v) => v.k !== 'obj');
          untracked(unknown, p, 'spread into an object');
          for (const v of spread) {
            if (v.k === 'obj')
              for (const [k, pv] of v.props) obj.props.set(k, [...(spread.length > 1 ? (obj.props.get(k) ?? []) : []), ...pv]);
            else obj.open = true;
          }
          continue;
        } else vals = OPAQUE;
        if (name === undefined) {
          untracked(vals, p, 'under a computed name');
          obj.open = true;
          continue;
        }
        obj.props.set(name, vals);
      }
      return [obj];
    }
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return closure(node, scope);
    if (ts.isClassExpression(node))
      throw new RouteSourceError(`${where(node)}: a class inside a handler; this reading does not follow one`);
    // Anything else (templates, arrays, arithmetic, typeof, ...): its parts are walked, and may hold no backend.
    node.forEachChild((child) => {
      if (ts.isExpression(child)) untracked(evaluate(child, scope), child, 'used in an expression this reading does not follow');
      else if (ts.isTemplateSpan(child)) untracked(evaluate(child.expression, scope), child, 'used in a template');
    });
    return OPAQUE;
  }

  /** Walks statements in order, their declarations bound first; what they return is collected. */
  function walkBlock(statements: readonly ts.Statement[], parent: Scope, returns: Val[]) {
    const scope = new Scope(parent, parent.module);
    declareAll(statements, scope);
    for (const s of statements) walkStatement(s, scope, returns);
  }
  function walkStatement(s: ts.Statement, scope: Scope, returns: Val[]): void {
    if (ts.isVariableStatement(s)) {
      // Evaluated where it stands, so its calls count even when nothing names it later.
      for (const d of s.declarationList.declarations) for (const name of boundNames(d.name)) lookup(name, scope, d);
    } else if (ts.isFunctionDeclaration(s)) {
      if (s.name) for (const v of lookup(s.name.text, scope, s)) if (v.k === 'fn') invoke(v, unknownArgs(v));
    } else if (ts.isReturnStatement(s)) {
      if (s.expression) returns.push(...evaluate(s.expression, scope));
    } else if (ts.isExpressionStatement(s)) {
      evaluate(s.expression, scope);
    } else if (ts.isBlock(s)) {
      walkBlock(s.statements, scope, returns);
    } else if (ts.isIfStatement(s)) {
      const test = evaluate(s.expression, scope);
      untracked(test, s.expression, 'tested');
      const known = single(test);
      if (!known || known.value) walkStatement(s.thenStatement, scope, returns);
      if (s.elseStatement && (!known || !known.value)) walkStatement(s.elseStatement, scope, returns);
    } else if (ts.isForOfStatement(s) || ts.isForInStatement(s) || ts.isForStatement(s)) {
      const inner = new Scope(scope, scope.module);
      if (!ts.isForStatement(s)) untracked(evaluate(s.expression, scope), s.expression, 'iterated');
      const init = s.initializer;
      if (init && ts.isVariableDeclarationList(init)) {
        for (const d of init.declarations) {
          if (ts.isForStatement(s)) {
            declareVariable(d, inner);
            for (const name of boundNames(d.name)) lookup(name, inner, d);
          } else bindPattern(d.name, () => OPAQUE, inner, false, d);
        }
      } else if (init) evaluate(init, inner);
      if (ts.isForStatement(s)) {
        if (s.condition) evaluate(s.condition, inner);
        if (s.incrementor) evaluate(s.incrementor, inner);
      }
      walkStatement(s.statement, inner, returns);
    } else if (ts.isTryStatement(s)) {
      walkBlock(s.tryBlock.statements, scope, returns);
      if (s.catchClause) {
        const inner = new Scope(scope, scope.module);
        const v = s.catchClause.variableDeclaration;
        if (v) bindPattern(v.name, () => OPAQUE, inner, false, v);
        walkBlock(s.catchClause.block.statements, inner, returns);
      }
      if (s.finallyBlock) walkBlock(s.finallyBlock.statements, scope, returns);
    } else if (ts.isSwitchStatement(s)) {
      untracked(evaluate(s.expression, scope), s.expression, 'tested');
      for (const clause of s.caseBlock.clauses) {
        if (ts.isCaseClause(clause)) evaluate(clause.expression, scope);
        walkBlock(clause.statements, scope, returns);
      }
    } else if (ts.isWhileStatement(s) || ts.isDoStatement(s)) {
      untracked(evaluate(s.expression, scope), s.expression, 'tested');
      walkStatement(s.statement, scope, returns);
    } else if (ts.isThrowStatement(s)) {
      untracked(evaluate(s.expression, scope), s.expression, 'thrown');
    } else if (ts.isLabeledStatement(s)) {
      walkStatement(s.statement, scope, returns);
    } else if (ts.isClassDeclaration(s)) {
      throw new RouteSourceError(`${where(s)}: a class inside a handler; this reading does not follow one`);
    }
    // Empty statements, type declarations, break and continue: nothing to follow.
  }

  // ---- what the sources write out: literal texts, through consts and the factories' arguments ----
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  /** The initializer of the `const` a name refers to where it stands, following imports; undefined for anything else. */
  function constOf(id: ts.Identifier, m: ModuleInfo): Written | undefined {
    for (let n: ts.Node = id.parent; n && !ts.isSourceFile(n); n = n.parent) {
      if (ts.isFunctionLike(n) && n.parameters.some((p) => boundNames(p.name).includes(id.text))) return undefined;
      if (!ts.isBlock(n)) continue;
      const found = constIn(n.statements, id.text, m);
      if (found !== null) return found;
    }
    return topConst(id.text, m);
  }
  /** A const among statements: its initializer, undefined when the name is declared otherwise, null when absent. */
  function constIn(statements: readonly ts.Statement[], name: string, m: ModuleInfo): Written | undefined | null {
    for (const s of statements) {
      if (ts.isFunctionDeclaration(s) && s.name?.text === name) return undefined;
      if (!ts.isVariableStatement(s)) continue;
      for (const d of s.declarationList.declarations) {
        if (!boundNames(d.name).includes(name)) continue;
        return s.declarationList.flags & ts.NodeFlags.Const && ts.isIdentifier(d.name) && d.initializer
          ? { init: d.initializer, module: m }
          : undefined;
      }
    }
    return null;
  }
  const declaredIn = (statements: readonly ts.Statement[], name: string) =>
    statements.some(
      (s) =>
        (ts.isFunctionDeclaration(s) && s.name?.text === name) ||
        (ts.isVariableStatement(s) && s.declarationList.declarations.some((d) => boundNames(d.name).includes(name))),
    );
  function topConst(name: string, m: ModuleInfo): Written | undefined {
    const found = constIn(m.sf.statements, name, m);
    if (found !== null) return found;
    const imp = m.imports.get(name);
    return imp?.file && imp.name !== '*' && imp.name !== 'default' ? topConst(imp.name, moduleOf(imp.file)) : undefined;
  }
  /** The parameter declaration a name refers to where it stands, if it is one. */
  function parameterOf(id: ts.Identifier): ts.ParameterDeclaration | undefined {
    for (let n: ts.Node = id.parent; n && !ts.isSourceFile(n); n = n.parent) {
      if (ts.isBlock(n) && declaredIn(n.statements, id.text)) return undefined;
      if (ts.isFunctionLike(n)) {
        const p = n.parameters.find((q) => boundNames(q.name).includes(id.text));
        if (p) return ts.isIdentifier(p.name) ? p : undefined;
      }
    }
    return undefined;
  }
  /** What a name or a chain `a.b.c` stands for as written: a const's initializer, or the factory's argument in this variant. */
  function valuesOf(node: ts.Expression, m: ModuleInfo, variant: Variant, depth: number): Written | undefined {
    const props: string[] = [];
    let root = node;
    while (ts.isPropertyAccessExpression(root)) {
      props.unshift(root.name.text);
      root = root.expression;
    }
    if (!ts.isIdentifier(root) || depth > 12) return undefined;
    const decl = constOf(root, m);
    if (decl) return follow(decl.init, props, decl.module, variant, depth + 1);
    const param = parameterOf(root);
    const passed = param && variant.get(param);
    return passed && follow(passed.init, props, passed.module, variant, depth + 1);
  }
  /** `expr.<props>` through objects written out, consts and parameters. */
  function follow(expr: ts.Expression, props: string[], m: ModuleInfo, variant: Variant, depth: number): Written | undefined {
    expr = stripped(expr);
    if (props.length === 0) return { init: expr, module: m };
    if (ts.isIdentifier(expr) || ts.isPropertyAccessExpression(expr)) {
      const v = valuesOf(expr, m, variant, depth + 1);
      return v && follow(v.init, props, v.module, variant, depth + 1);
    }
    if (!ts.isObjectLiteralExpression(expr)) return undefined;
    for (const p of [...expr.properties].reverse()) {
      if (ts.isSpreadAssignment(p)) return undefined; // it may set the field
      if (!p.name || !ts.isIdentifier(p.name) || p.name.text !== props[0]) continue;
      if (ts.isPropertyAssignment(p)) return follow(p.initializer, props.slice(1), m, variant, depth + 1);
      if (ts.isShorthandPropertyAssignment(p)) return follow(p.name, props.slice(1), m, variant, depth + 1);
      return undefined;
    }
    return undefined;
  }
  /** The text an expression always has, as a pattern: a template's unknown parts match anything, a `?:` either side. */
  function literal(node: ts.Expression, m: ModuleInfo, variant: Variant, depth = 0): string | undefined {
    node = stripped(node);
    if (depth > 12) return undefined;
    if (ts.isStringLiteralLike(node) || ts.isNumericLiteral(node)) return escape(node.text);
    if (ts.isTemplateExpression(node)) {
      let out = escape(node.head.text);
      for (const span of node.templateSpans) {
        out += (literal(span.expression, m, variant, depth + 1) ?? '.*') + escape(span.literal.text);
      }
      return out;
    }
    if (ts.isConditionalExpression(node)) {
      const [a, b] = [literal(node.whenTrue, m, variant, depth + 1), literal(node.whenFalse, m, variant, depth + 1)];
      return a !== undefined && b !== undefined ? `(?:${a}|${b})` : undefined;
    }
    if (ts.isIdentifier(node) || ts.isPropertyAccessExpression(node)) {
      const v = valuesOf(node, m, variant, depth + 1);
      return v && literal(v.init, v.module, variant, depth + 1);
    }
    return undefined;
  }
  /** The fields a spread `...expr` may set, when the sources say (an object written out, maybe behind `&&` or `?:`). */
  function spreadKeys(node: ts.Expression, m: ModuleInfo, variant: Variant, depth = 0): Set<string> | undefined {
    node = stripped(node);
    if (depth > 12) return undefined;
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken)
      return spreadKeys(node.right, m, variant, depth + 1);
    if (ts.isConditionalExpression(node)) {
      const [a, b] = [spreadKeys(node.whenTrue, m, variant, depth + 1), spreadKeys(node.whenFalse, m, variant, depth + 1)];
      return a && b && new Set([...a, ...b]);
    }
    if (ts.isObjectLiteralExpression(node)) {
      const keys = new Set<string>();
      for (const p of node.properties) {
        if (ts.isSpreadAssignment(p)) {
          const inner = spreadKeys(p.expression, m, variant, depth + 1);
          if (!inner) return undefined;
          inner.forEach((k) => keys.add(k));
        } else if (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) keys.add(p.name.text);
        else return undefined;
      }
      return keys;
    }
    if (ts.isIdentifier(node) || ts.isPropertyAccessExpression(node)) {
      const v = valuesOf(node, m, variant, depth + 1);
      return v && spreadKeys(v.init, v.module, variant, depth + 1);
    }
    return undefined;
  }
  /** The elements of an array written out (directly, or as a const). */
  function elementsOf(expr: ts.Expression, m: ModuleInfo): ts.Expression[] | undefined {
    expr = stripped(expr);
    if (ts.isIdentifier(expr)) {
      const decl = constOf(expr, m);
      return decl && elementsOf(decl.init, decl.module);
    }
    if (!ts.isArrayLiteralExpression(expr) || expr.elements.some(ts.isSpreadElement)) return undefined;
    return [...expr.elements];
  }
  /**
   * Every call of a factory, as the arguments it passes, when they are all known: the factory is called by name in its
   * module only (`memberList('/orgs/:orgname/members', ...)`), or mapped over an array written out
   * (`TEAM_ACTIONS.map(teamAction)`, `(['bind', 'unbind'] as const).map((action) => ...)`).
   */
  function callsOf(fn: ts.SignatureDeclaration, m: ModuleInfo): (ts.Expression | undefined)[][] | undefined {
    const mapped = (at: ts.Node): ts.Expression[][] | undefined => {
      const c = at.parent;
      if (!ts.isCallExpression(c) || c.arguments[0] !== at || c.arguments.length !== 1) return undefined;
      if (!ts.isPropertyAccessExpression(c.expression) || c.expression.name.text !== 'map') return undefined;
      return elementsOf(c.expression.expression, m)?.map((e) => [e]);
    };
    if (ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) {
      if (!ts.isVariableDeclaration(fn.parent)) return mapped(fn);
    }
    const holder = ts.isFunctionDeclaration(fn) ? fn : ts.isVariableDeclaration(fn.parent) ? fn.parent : undefined;
    const name = holder?.name;
    if (!holder || !name || !ts.isIdentifier(name)) return undefined;
    if (isExported(ts.isFunctionDeclaration(holder) ? holder : holder.parent.parent) || m.exportAs.has(name.text)) return undefined;
    const calls: (ts.Expression | undefined)[][] = [];
    let unknown = false;
    const visit = (x: ts.Node) => {
      if (unknown) return;
      if (ts.isIdentifier(x) && x.text === name.text && x !== name) {
        if (ts.isCallExpression(x.parent) && x.parent.expression === x) {
          const args = x.parent.arguments;
          if (args.some(ts.isSpreadElement)) unknown = true;
          calls.push(fn.parameters.map((_p, i) => args[i]));
        } else {
          const each = mapped(x);
          if (each) calls.push(...each);
          else unknown = true;
        }
      }
      x.forEachChild(visit);
    };
    m.sf.forEachChild(visit);
    return unknown ? undefined : calls;
  }
  /** The variants of a route call: one per combination of its enclosing factories' calls. */
  function variantsAt(node: ts.Node, m: ModuleInfo): Variant[] {
    let variants: Variant[] = [new Map()];
    const chain: ts.SignatureDeclaration[] = [];
    for (let n = node.parent; n && !ts.isSourceFile(n); n = n.parent) if (ts.isFunctionLike(n)) chain.unshift(n);
    for (const fn of chain) {
      const calls = callsOf(fn, m) ?? [fn.parameters.map(() => undefined)];
      variants = variants.flatMap((v) =>
        calls.map((args) => {
          const next = new Map(v);
          fn.parameters.forEach((p, i) => next.set(p, args[i] && { init: args[i]!, module: m }));
          return next;
        }),
      );
      if (variants.length > 256) throw new RouteSourceError(`${where(node)}: more than 256 ways its factories are called`);
    }
    return variants;
  }
  /** The scope a route call is evaluated in: its module's, then each enclosing function's, with this variant's arguments. */
  function scopeAt(node: ts.Node, m: ModuleInfo, variant: Variant): Scope {
    const chain: ts.Node[] = [];
    for (let n = node.parent; n && !ts.isSourceFile(n); n = n.parent) chain.unshift(n);
    let scope = m.scope;
    for (const n of chain) {
      if (ts.isFunctionLike(n) && 'body' in n) {
        const inner = (scope = new Scope(scope, m));
        for (const p of n.parameters) {
          const passed = variant.get(p);
          const value = () => (passed ? evaluate(passed.init, scopeAt(passed.init, passed.module, new Map())) : OPAQUE);
          bindPattern(p.name, () => (p.initializer && !passed ? [...value(), ...evaluate(p.initializer, inner)] : value()), inner, true, p);
        }
      } else if (ts.isBlock(n)) {
        scope = new Scope(scope, m);
        declareAll(n.statements, scope);
      }
    }
    return scope;
  }

  // ---- the route calls ----
  const sourceFiles: string[] = [];
  const walkDir = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const f = path.join(dir, e.name);
      if (e.isDirectory()) walkDir(f);
      else if (f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts')) sourceFiles.push(f);
    }
  };
  walkDir(path.join(root, 'apps/gateway/src'));
  sourceFiles.sort();

  const declared: Declared[] = [];
  for (const file of sourceFiles) {
    if (!fs.readFileSync(file, 'utf8').includes('sectionRoutes(')) continue; // no maker here: not parsed unless reached
    const m = moduleOf(file);
    const makers = new Map<string, ts.ObjectLiteralExpression>();
    for (const s of m.sf.statements) {
      if (!ts.isVariableStatement(s)) continue;
      for (const d of s.declarationList.declarations) {
        const init = d.initializer;
        if (
          !ts.isIdentifier(d.name) ||
          !init ||
          !ts.isCallExpression(init) ||
          !ts.isIdentifier(init.expression) ||
          init.expression.text !== 'sectionRoutes'
        )
          continue;
        const defaults = init.arguments[0];
        if (!defaults || !ts.isObjectLiteralExpression(defaults))
          throw new RouteSourceError(`${where(init)}: sectionRoutes without its defaults written out`);
        if (isExported(s)) throw new RouteSourceError(`${where(s)}: a route maker used outside its file`);
        makers.set(d.name.text, defaults);
      }
    }
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && makers.has(node.expression.text)) {
        const spec = node.arguments[0];
        if (!spec || !ts.isObjectLiteralExpression(spec)) throw new RouteSourceError(`${where(node)}: a row not written out as an object`);
        for (const variant of variantsAt(node, m)) {
          const literalOf: Record<string, RegExp | undefined> = {};
          for (const obj of [makers.get(node.expression.text)!, spec]) {
            for (const p of obj.properties) {
              // A spread may set fields: those it may set, written before it, are no longer known.
              if (ts.isSpreadAssignment(p)) {
                const keys = spreadKeys(p.expression, m, variant);
                for (const k of Object.keys(literalOf)) if (!keys || keys.has(k)) literalOf[k] = undefined;
              }
              const key = p.name && ts.isIdentifier(p.name) ? p.name.text : undefined;
              if (!key || !(STATIC_KEYS as readonly string[]).includes(key)) continue;
              const value = ts.isPropertyAssignment(p) ? p.initializer : ts.isShorthandPropertyAssignment(p) ? p.name : undefined;
              const text = value && literal(value, m, variant);
              literalOf[key] = text === undefined ? undefined : new RegExp(`^${text}$`);
            }
          }
          declared.push({ file: m.sf.fileName, call: node, spec, scope: scopeAt(node, m, variant), literal: literalOf });
        }
      }
      node.forEachChild(visit);
    };
    m.sf.forEachChild(visit);
  }

  // ---- each row to its call, then its handler walked ----
  const seen = new Set<string>();
  for (const r of routes) {
    const key = `${r.method.toUpperCase()} ${r.path}`;
    if (seen.has(key)) throw new RouteSourceError(`${key}: two rows`);
    seen.add(key);
  }
  const rowsOf = new Map<Declared, Route[]>();
  for (const r of routes) {
    const matches = declared.filter((d) =>
      STATIC_KEYS.every((k) => {
        const pattern = d.literal[k];
        return pattern === undefined || (r[k] !== undefined && pattern.test(String(r[k])));
      }),
    );
    if (matches.length !== 1) {
      const found = [...new Set(matches.map((d) => where(d.call)))].join(', ') || 'none';
      throw new RouteSourceError(
        `${r.method.toUpperCase()} ${r.path}: ${matches.length} route calls may have made it (${found}); write its method, path or summary out`,
      );
    }
    rowsOf.set(matches[0], [...(rowsOf.get(matches[0]) ?? []), r]);
  }

  const out = new Map<Route, RouteSource>();
  for (const [d, rows] of rowsOf) {
    const handle = d.spec.properties.find((p) => p.name && ts.isIdentifier(p.name) && p.name.text === 'handle');
    const fns: Val[] =
      handle && ts.isMethodDeclaration(handle)
        ? [{ k: 'fn', node: handle, scope: d.scope }]
        : handle && ts.isPropertyAssignment(handle)
          ? evaluate(handle.initializer, d.scope)
          : handle && ts.isShorthandPropertyAssignment(handle)
            ? lookup(handle.name.text, d.scope, handle)
            : [];
    if (!handle || fns.some((f) => f.k !== 'fn'))
      throw new RouteSourceError(`${where(d.call)}: a row whose handle is not a function written out`);
    const { calls } = recorded(() => {
      for (const fn of fns) invoke(fn as FnVal, [OPAQUE, [{ k: 'ctx' }]]);
    });
    const names = calls.map((c) => {
      // "/platformadmin.orgsteams.v1.OrganizationsService/CreateOrg" → "OrganizationsService.CreateOrg"
      const [service, method] = definitions.get(c.app)!.get(c.client)![c.method].path.slice(1).split('/');
      const rpc = `${service.split('.').pop()}.${method}`;
      return c.door === 'kept' ? `${rpc} (kept)` : rpc;
    });
    for (const r of rows) out.set(r, { file: d.file, calls: [...new Set(names)].sort() });
  }
  return out;
}
