import type { metricsproxyV1 } from '@platform/proto';
import type { DashboardApi } from './dashboard-http';
import { backendUrl } from './naming';

/** Something made (or found) on the dashboard API; `created` when this call made it, so a failure can undo it. */
export interface Made<T> {
  value: T;
  created: boolean;
}

/**
 * Flavor A: a Grafana-compatible HTTP API. Folders (`/api/folders`), Prometheus datasources with proxy access
 * (`/api/datasources`), dashboards searched by folder (`/api/search`). Credentials and TLS material go to
 * `secureJsonData` only, which the API stores encrypted and never answers back.
 */
export class FlavorA {
  constructor(readonly api: DashboardApi) {}

  /** The organization's folder: reused when its uid exists, created otherwise (a concurrent create is reused too). */
  async ensureFolder(uid: string, title: string): Promise<Made<{ id: number; uid: string }>> {
    const found = await this.api.call('GET', `/api/folders/${encodeURIComponent(uid)}`);
    if (found.status === 200) return { value: { id: Number(found.body.id), uid }, created: false };
    if (found.status !== 404) throw this.api.refused(found, `read folder ${uid}`);
    const made = await this.api.call('POST', '/api/folders', { uid, title });
    if (made.status === 200) return { value: { id: Number(made.body.id), uid }, created: true };
    if (made.status === 409 || made.status === 412) return this.ensureFolder(uid, title);
    throw this.api.refused(made, `create folder ${uid}`);
  }

  /** Creates the datasource, or updates the one of the same uid in place (registering again never duplicates). */
  async putDatasource(
    uid: string,
    name: string,
    backend: metricsproxyV1.BackendConfig,
    isDefault: boolean,
  ): Promise<Made<{ id: number; uid: string }>> {
    const body = datasourceBody(uid, name, backend, isDefault);
    const found = await this.api.call('GET', `/api/datasources/uid/${uid}`);
    if (found.status === 200) {
      const updated = await this.api.call('PUT', `/api/datasources/uid/${uid}`, { ...body, version: found.body.version });
      if (updated.status !== 200) throw this.api.refused(updated, `update datasource ${name}`);
      return { value: { id: Number(found.body.id), uid }, created: false };
    }
    if (found.status !== 404) throw this.api.refused(found, `read datasource ${name}`);
    const made = await this.api.call('POST', '/api/datasources', body);
    if (made.status === 200) return { value: { id: Number(made.body.id ?? made.body.datasource?.id), uid }, created: true };
    if (made.status === 409) return this.putDatasource(uid, name, backend, isDefault); // made meanwhile: update it
    throw this.api.refused(made, `create datasource ${name}`);
  }

  /** Deletes the datasource; one already gone is fine. */
  async deleteDatasource(uid: string): Promise<void> {
    const res = await this.api.call('DELETE', `/api/datasources/uid/${uid}`);
    if (res.status !== 200 && res.status !== 404) throw this.api.refused(res, `delete datasource ${uid}`);
  }

  /** Whether the folder holds no dashboard (nor nested folder). */
  async folderIsEmpty(uid: string): Promise<boolean> {
    const res = await this.api.call('GET', `/api/search?folderUIDs=${encodeURIComponent(uid)}&limit=1`);
    if (res.status === 404) return true;
    if (res.status !== 200 || !Array.isArray(res.body)) throw this.api.refused(res, `search folder ${uid}`);
    return res.body.length === 0;
  }

  /** Deletes the folder; one already gone is fine. */
  async deleteFolder(uid: string): Promise<void> {
    const res = await this.api.call('DELETE', `/api/folders/${encodeURIComponent(uid)}`);
    if (res.status !== 200 && res.status !== 404) throw this.api.refused(res, `delete folder ${uid}`);
  }
}

/**
 * A Prometheus datasource with proxy access (the dashboard server calls the backend, so browsers never hold its
 * credentials). What is secret, and the TLS material, goes to secureJsonData; jsonData only says which are set.
 */
function datasourceBody(uid: string, name: string, b: metricsproxyV1.BackendConfig, isDefault: boolean) {
  const tls = b.tls;
  const jsonData: Record<string, unknown> = { httpMethod: 'POST' };
  const secureJsonData: Record<string, string> = {};
  if (b.basicAuth) secureJsonData.basicAuthPassword = b.basicAuth.password;
  if (b.bearerToken) {
    jsonData.httpHeaderName1 = 'Authorization';
    secureJsonData.httpHeaderValue1 = `Bearer ${b.bearerToken}`;
  }
  if (tls) {
    jsonData.tlsSkipVerify = tls.insecureSkipTlsVerify;
    if (tls.serverName) jsonData.serverName = tls.serverName;
    if (tls.ca) {
      jsonData.tlsAuthWithCACert = true;
      secureJsonData.tlsCACert = tls.ca;
    }
    if (tls.cert && tls.key) {
      jsonData.tlsAuth = true;
      secureJsonData.tlsClientCert = tls.cert;
      secureJsonData.tlsClientKey = tls.key;
    }
  }
  return {
    uid,
    name,
    type: 'prometheus',
    access: 'proxy',
    url: backendUrl(b),
    isDefault,
    basicAuth: b.basicAuth !== undefined,
    basicAuthUser: b.basicAuth?.username ?? '',
    jsonData,
    secureJsonData,
  };
}
