import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import { CredentialsMethod, OpenFgaClient } from '@openfga/sdk';
import { authzApp, TypeSystem } from '@platform/app-authz';
import { loadConfig } from '@platform/service-kit';
import { CliError, EXIT, type CliIo } from './io';

export interface SetupOpenFgaOptions {
  /** The store to find, or create when missing; ignored when OPENFGA_STORE_ID names one. */
  storeName?: string;
  /** A ConfigMap of the pod's namespace to record OPENFGA_STORE_ID in (the chart's hook Job). */
  configmap?: string;
}

/** Where the Kubernetes API is and how to call it: the pod's service account, in a cluster. */
export interface KubernetesAccess {
  baseUrl: string;
  token: string;
  namespace: string;
  ca?: Buffer;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The API server and credentials every pod with a mounted service-account token has. */
export function inClusterKubernetes(env: NodeJS.ProcessEnv, dir = SERVICE_ACCOUNT_DIR): KubernetesAccess {
  const host = env.KUBERNETES_SERVICE_HOST;
  const read = (file: string) => {
    try {
      return fs.readFileSync(path.join(dir, file));
    } catch {
      throw new CliError(
        `--configmap needs the pod's service-account token (${path.join(dir, file)} is missing): run it in a pod whose ` +
          'service account may write that ConfigMap, with automountServiceAccountToken',
        EXIT.config,
      );
    }
  };
  if (!host) throw new CliError('--configmap works inside a Kubernetes pod only (KUBERNETES_SERVICE_HOST is not set)', EXIT.config);
  return {
    baseUrl: `https://${host.includes(':') ? `[${host}]` : host}:${env.KUBERNETES_SERVICE_PORT ?? '443'}`,
    token: read('token').toString('utf8').trim(),
    namespace: read('namespace').toString('utf8').trim(),
    ca: read('ca.crt'),
  };
}

/**
 * `setup-openfga`: makes the OpenFGA server ready for authz, the same on every run. The store is
 * OPENFGA_STORE_ID (it must exist) or the one named --store-name (the oldest of that name, created when there
 * is none); the platform's authorization model (apps/authz/model, as authz loads it) is written when the
 * store's latest model is not the same, so a repeated run writes nothing. With --configmap the store's id is
 * recorded in that ConfigMap, where the chart's authz pods read OPENFGA_STORE_ID from. The id is printed on
 * stdout.
 */
export async function setupOpenFga(
  opts: SetupOpenFgaOptions,
  io: CliIo,
  kubernetes: () => KubernetesAccess = () => inClusterKubernetes(io.env),
): Promise<number> {
  const config = loadConfig(authzApp.env, io.env);
  const apiUrl = config.OPENFGA_API_URL;
  if (!apiUrl) throw new CliError('OPENFGA_API_URL is not set: name the OpenFGA server to set up', EXIT.config);
  if (!config.OPENFGA_STORE_ID && !opts.storeName) {
    throw new CliError('give --store-name <name>, or set OPENFGA_STORE_ID to the id of an existing store', EXIT.usage);
  }
  // Resolved before OpenFGA is touched: a pod that cannot record the id should not create a store.
  const kube = opts.configmap ? kubernetes() : undefined;
  const where = `OpenFGA at ${apiUrl} (OPENFGA_API_URL)`;
  const client = new OpenFgaClient({
    apiUrl,
    ...(config.OPENFGA_API_TOKEN && { credentials: { method: CredentialsMethod.ApiToken, config: { token: config.OPENFGA_API_TOKEN } } }),
  });
  const call = <T>(what: string, fn: () => Promise<T>) => fn().catch((err) => Promise.reject(fgaFailure(where, what, err)));

  let storeId: string;
  if (config.OPENFGA_STORE_ID) {
    storeId = config.OPENFGA_STORE_ID;
    const store = await call(`reading the store ${storeId} (OPENFGA_STORE_ID)`, () => client.getStore({ storeId }));
    io.err(`store ${storeId} ("${store.name}") at ${apiUrl}\n`);
  } else {
    storeId = await findOrCreateStore(client, opts.storeName!, io, call, apiUrl);
  }
  client.storeId = storeId;

  const wanted = TypeSystem.fromFile().model;
  const latest = await call('reading the latest authorization model', () => client.readLatestAuthorizationModel());
  const current = latest.authorization_model;
  if (current && sameModel(current, wanted)) {
    io.err(`authorization model ${current.id} is the platform's: nothing to write\n`);
  } else {
    const written = await call('writing the authorization model', () => client.writeAuthorizationModel(wanted as never));
    io.err(`authorization model ${written.authorization_model_id} written${current ? ` (the latest was ${current.id})` : ''}\n`);
  }

  if (kube) {
    await writeConfigMap(kube, opts.configmap!, { OPENFGA_STORE_ID: storeId });
    io.err(`ConfigMap ${kube.namespace}/${opts.configmap}: OPENFGA_STORE_ID=${storeId}\n`);
  }
  io.out(`${storeId}\n`);
  return EXIT.ok;
}

async function findOrCreateStore(
  client: OpenFgaClient,
  name: string,
  io: CliIo,
  call: <T>(what: string, fn: () => Promise<T>) => Promise<T>,
  apiUrl: string,
): Promise<string> {
  const named: { id: string; name: string; created_at: string }[] = [];
  let continuationToken: string | undefined;
  do {
    // Servers that filter by name do it for us; the others list every store, and the name is checked here.
    const page = await call('listing the stores', () => client.listStores({ name, pageSize: 100, continuationToken }));
    named.push(...page.stores.filter((s) => s.name === name));
    continuationToken = page.continuation_token || undefined;
  } while (continuationToken);
  if (named.length === 0) {
    const created = await call(`creating the store "${name}"`, () => client.createStore({ name }));
    io.err(`store ${created.id} ("${name}") created at ${apiUrl}\n`);
    return created.id;
  }
  // OpenFGA allows several stores of one name; the oldest is the one every earlier run chose.
  named.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  if (named.length > 1) {
    io.err(`note: ${named.length} stores are named "${name}" (${named.map((s) => s.id).join(', ')}); using the oldest\n`);
  }
  io.err(`store ${named[0].id} ("${name}") found at ${apiUrl}\n`);
  return named[0].id;
}

/** Same schema version, type definitions and conditions: what authz compares before writing the model itself. */
function sameModel(
  a: { schema_version?: string; type_definitions?: unknown; conditions?: unknown },
  b: { schema_version?: string; type_definitions?: unknown; conditions?: unknown },
): boolean {
  const conditions = (m: { conditions?: unknown }) => JSON.stringify(m.conditions ?? {});
  return (
    a.schema_version === b.schema_version &&
    JSON.stringify(a.type_definitions) === JSON.stringify(b.type_definitions) &&
    conditions(a) === conditions(b)
  );
}

/** An OpenFGA failure as one line: a missing store is the command's failure (1), the rest a dependency's (69). */
function fgaFailure(where: string, what: string, err: unknown): CliError {
  const e = err as { statusCode?: number; apiErrorMessage?: string; message?: string; cause?: { code?: string } };
  if (e.statusCode === 404 && /store/.test(what)) return new CliError(`${where}: ${what}: no such store`, EXIT.failed);
  if (e.statusCode === 401 || e.statusCode === 403) {
    return new CliError(`${where}: ${what}: the credentials were refused (OPENFGA_API_TOKEN), HTTP ${e.statusCode}`, EXIT.unavailable);
  }
  const reason = e.statusCode ? `HTTP ${e.statusCode}${e.apiErrorMessage ? `: ${e.apiErrorMessage}` : ''}` : (e.cause?.code ?? e.message);
  return new CliError(`${where}: ${what} failed: ${reason}`, e.statusCode && e.statusCode < 500 ? EXIT.failed : EXIT.unavailable);
}

/** Creates the ConfigMap with `data`, or merges `data` into the one there. */
export async function writeConfigMap(kube: KubernetesAccess, name: string, data: Record<string, string>): Promise<void> {
  const base = `/api/v1/namespaces/${encodeURIComponent(kube.namespace)}/configmaps`;
  const patched = await kubeRequest(kube, 'PATCH', `${base}/${encodeURIComponent(name)}`, { data }, 'application/merge-patch+json');
  if (patched.status === 404) {
    const created = await kubeRequest(kube, 'POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
    // Made by someone else in between: merge into theirs.
    if (created.status === 409) return writeConfigMap(kube, name, data);
    if (created.status >= 300) throw kubeFailure(`creating the ConfigMap ${name}`, created);
  } else if (patched.status >= 300) {
    throw kubeFailure(`updating the ConfigMap ${name}`, patched);
  }
}

function kubeFailure(what: string, res: { status: number; body: string }): CliError {
  let message = res.body.slice(0, 300);
  try {
    message = (JSON.parse(res.body) as { message?: string }).message ?? message;
  } catch {
    // not JSON: the raw text
  }
  return new CliError(`the Kubernetes API refused ${what}: HTTP ${res.status}: ${message}`, EXIT.unavailable);
}

function kubeRequest(
  kube: KubernetesAccess,
  method: string,
  urlPath: string,
  body: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: string }> {
  const url = new URL(urlPath, kube.baseUrl);
  const payload = JSON.stringify(body);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      url,
      {
        method,
        ca: kube.ca,
        timeout: 10_000,
        headers: {
          authorization: `Bearer ${kube.token}`,
          accept: 'application/json',
          'content-type': contentType,
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(new CliError(`cannot reach the Kubernetes API at ${kube.baseUrl}: ${err.code ?? err.message}`, EXIT.unavailable)),
    );
    req.end(payload);
  });
}
