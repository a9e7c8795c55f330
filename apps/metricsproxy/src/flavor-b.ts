import type { metricsproxyV1 } from '@platform/proto';
import type { DashboardApi } from './dashboard-http';
import type { Made } from './flavor-a';
import { backendUrl } from './naming';

const enc = encodeURIComponent;

/**
 * Flavor B: a Perses-compatible HTTP API (`/api/v1`). Projects, project secrets (basic auth, authorization,
 * TLS config) and Prometheus datasources whose HTTP proxy references the secret by name, so the credentials
 * live in the secret only.
 */
export class FlavorB {
  constructor(readonly api: DashboardApi) {}

  /** The organization's project: reused when it exists, created otherwise. */
  async ensureProject(name: string, displayName: string): Promise<Made<string>> {
    const found = await this.api.call('GET', `/api/v1/projects/${enc(name)}`);
    if (found.status === 200) return { value: name, created: false };
    if (found.status !== 404) throw this.api.refused(found, `read project ${name}`);
    const made = await this.api.call('POST', '/api/v1/projects', {
      kind: 'Project',
      metadata: { name },
      spec: { display: { name: displayName } },
    });
    if (made.status === 200 || made.status === 201) return { value: name, created: true };
    if (made.status === 409) return { value: name, created: false };
    throw this.api.refused(made, `create project ${name}`);
  }

  async deleteProject(name: string): Promise<void> {
    const res = await this.api.call('DELETE', `/api/v1/projects/${enc(name)}`);
    if (res.status >= 300 && res.status !== 404) throw this.api.refused(res, `delete project ${name}`);
  }

  /** Creates or replaces the project secret holding the backend's credentials and TLS material. */
  async putSecret(project: string, name: string, b: metricsproxyV1.BackendConfig): Promise<Made<string>> {
    const spec: Record<string, unknown> = {};
    if (b.basicAuth) spec.basicAuth = { username: b.basicAuth.username, password: b.basicAuth.password };
    if (b.bearerToken) spec.authorization = { type: 'Bearer', credentials: b.bearerToken };
    if (b.tls) {
      spec.tlsConfig = {
        ...(b.tls.ca && { ca: b.tls.ca }),
        ...(b.tls.cert && { cert: b.tls.cert }),
        ...(b.tls.key && { key: b.tls.key }),
        ...(b.tls.serverName && { serverName: b.tls.serverName }),
        insecureSkipVerify: b.tls.insecureSkipTlsVerify,
      };
    }
    return this.put(project, 'secrets', name, { kind: 'Secret', metadata: { name, project }, spec });
  }

  async deleteSecret(project: string, name: string): Promise<void> {
    await this.delete(project, 'secrets', name);
  }

  /** Creates or replaces the Prometheus datasource, its HTTP proxy using the secret. */
  async putDatasource(
    project: string,
    name: string,
    secret: string,
    b: metricsproxyV1.BackendConfig,
    isDefault: boolean,
  ): Promise<Made<string>> {
    return this.put(project, 'datasources', name, {
      kind: 'Datasource',
      metadata: { name, project },
      spec: {
        default: isDefault,
        plugin: {
          kind: 'PrometheusDatasource',
          spec: { proxy: { kind: 'HTTPProxy', spec: { url: backendUrl(b), secret } } },
        },
      },
    });
  }

  async deleteDatasource(project: string, name: string): Promise<void> {
    await this.delete(project, 'datasources', name);
  }

  private async put(project: string, kind: 'secrets' | 'datasources', name: string, body: unknown): Promise<Made<string>> {
    const path = `/api/v1/projects/${enc(project)}/${kind}`;
    const found = await this.api.call('GET', `${path}/${enc(name)}`);
    if (found.status === 200) {
      const updated = await this.api.call('PUT', `${path}/${enc(name)}`, body);
      if (updated.status !== 200) throw this.api.refused(updated, `update ${kind} ${name}`);
      return { value: name, created: false };
    }
    if (found.status !== 404) throw this.api.refused(found, `read ${kind} ${name}`);
    const made = await this.api.call('POST', path, body);
    if (made.status === 200 || made.status === 201) return { value: name, created: true };
    if (made.status === 409) return this.put(project, kind, name, body);
    throw this.api.refused(made, `create ${kind} ${name}`);
  }

  private async delete(project: string, kind: 'secrets' | 'datasources', name: string): Promise<void> {
    const res = await this.api.call('DELETE', `/api/v1/projects/${enc(project)}/${kind}/${enc(name)}`);
    if (res.status >= 300 && res.status !== 404) throw this.api.refused(res, `delete ${kind} ${name}`);
  }
}
