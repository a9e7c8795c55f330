import { randomBytes, scryptSync } from 'node:crypto';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { stringify } from 'yaml';

/** The binding an installer was bound with, as stored: the admin password only as a hash. */
export interface StoredBinding {
  clusterId: string;
  adminUsername: string;
  /** `scrypt$N$r$p$salt$hash` (base64), or "" when the notification gave no password. */
  adminPasswordHash: string;
  domainWhiteList: string[];
  providerAAccountID?: string;
  options: Record<string, unknown>;
}

/** What the archive is rendered from. */
export interface ArchiveInput {
  installerId: string;
  marketplace: string;
  subscriptionId: string;
  /** The installer's own options; the binding's options override them key by key. */
  options: Record<string, unknown>;
  binding: StoredBinding;
  boundAt: Date;
}

const SCRYPT = { N: 16384, r: 8, p: 1 };

/** A salted scrypt hash of the admin password, in the form the installer's chart verifies logins with. */
export function hashAdminPassword(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** The Helm values of the installer: the binding info the buyer's deployment is configured with. */
export function renderValues(input: ArchiveInput): string {
  const { binding } = input;
  return stringify({
    marketplace: { name: input.marketplace, subscriptionId: input.subscriptionId, installerId: input.installerId },
    cluster: { id: binding.clusterId },
    admin: { username: binding.adminUsername, passwordHash: binding.adminPasswordHash },
    domainWhiteList: binding.domainWhiteList,
    ...(binding.providerAAccountID ? { providerA: { accountID: binding.providerAAccountID } } : {}),
    options: { ...input.options, ...binding.options },
  });
}

/** Quotes a value for POSIX sh, whatever it holds. */
const shellQuote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

/**
 * The install script: it refuses a cluster other than the one bound (the cluster ID is the kube-system
 * namespace's UID), then installs the chart with the values beside it.
 */
export function renderInstallScript(input: ArchiveInput): string {
  return `#!/bin/sh
# Installer ${input.installerId} for ${input.marketplace} subscription ${input.subscriptionId}.
set -eu
cd "$(dirname "$0")"
EXPECTED_CLUSTER_ID=${shellQuote(input.binding.clusterId)}
ACTUAL_CLUSTER_ID="$(kubectl get namespace kube-system -o jsonpath='{.metadata.uid}')"
if [ "$ACTUAL_CLUSTER_ID" != "$EXPECTED_CLUSTER_ID" ]; then
  echo "this installer is bound to cluster $EXPECTED_CLUSTER_ID, not $ACTUAL_CLUSTER_ID" >&2
  exit 1
fi
helm upgrade --install platform oci://ghcr.io/platform/charts/platform \\
  --namespace platform --create-namespace \\
  --values values.yaml --wait
echo "installed; sign in as ${input.binding.adminUsername.replace(/[^\w.-]/g, '')}"
`;
}

/**
 * The installer archive, `<installerId>.tar.gz`: `<installerId>/values.yaml` and `<installerId>/install.sh`
 * (executable). Entries carry the binding time, so the same binding always gives the same bytes.
 */
export async function buildArchive(input: ArchiveInput): Promise<Buffer> {
  const tar = pack();
  const mtime = input.boundAt;
  const dir = input.installerId;
  const chunks: Buffer[] = [];
  const gzip = createGzip();
  const done = new Promise<Buffer>((resolve, reject) => {
    gzip.on('data', (c: Buffer) => chunks.push(c));
    gzip.on('end', () => resolve(Buffer.concat(chunks)));
    gzip.on('error', reject);
    tar.on('error', reject);
  });
  tar.pipe(gzip);
  tar.entry({ name: `${dir}/values.yaml`, mode: 0o644, mtime }, renderValues(input));
  tar.entry({ name: `${dir}/install.sh`, mode: 0o755, mtime }, renderInstallScript(input));
  tar.finalize();
  return done;
}
