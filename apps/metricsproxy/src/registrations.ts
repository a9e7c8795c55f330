import { NotFoundError, UnavailableError } from '@platform/errors';
import type { metricsproxyV1 } from '@platform/proto';
import type { Logger } from '@platform/service-kit';
import type { BackendsStore } from './backends-store';
import type { MetricsproxyConfig } from './config';
import { DashboardApi } from './dashboard-http';
import { FlavorA } from './flavor-a';
import { FlavorB } from './flavor-b';
import { backendUrl, datasourceName, datasourceUid, orgContainer } from './naming';

type Ctx = metricsproxyV1.BackendContext;

/** The settings a flavor lacks, by name; empty when it is configured. */
export function missingSettings(config: MetricsproxyConfig, flavor: 'A' | 'B'): string[] {
  const url = flavor === 'A' ? 'FLAVORA_URL' : 'FLAVORB_URL';
  const token = flavor === 'A' ? 'FLAVORA_TOKEN' : 'FLAVORB_TOKEN';
  return [url, token].filter((k) => !config[k as keyof MetricsproxyConfig]);
}

/**
 * Registering and unregistering cluster metrics backends on the two dashboard flavors. A register either
 * completes (dashboard objects and our row) or leaves nothing it made behind: each step that created something
 * is undone, newest first, when a later one fails. Objects that already existed (a reused folder or project,
 * an updated datasource) are left as they were found.
 */
export class Registrations {
  private readonly a?: FlavorA;
  private readonly b?: FlavorB;

  constructor(
    private readonly store: BackendsStore,
    private readonly config: MetricsproxyConfig,
    private readonly log: Logger,
  ) {
    const timeoutMs = config.FLAVOR_TIMEOUT_MS;
    if (config.FLAVORA_URL && config.FLAVORA_TOKEN) {
      this.a = new FlavorA(new DashboardApi({ name: 'flavor A', url: config.FLAVORA_URL, token: config.FLAVORA_TOKEN, timeoutMs }));
    }
    if (config.FLAVORB_URL && config.FLAVORB_TOKEN) {
      this.b = new FlavorB(new DashboardApi({ name: 'flavor B', url: config.FLAVORB_URL, token: config.FLAVORB_TOKEN, timeoutMs }));
    }
  }

  async registerA(ctx: Ctx, backend: metricsproxyV1.BackendConfig): Promise<metricsproxyV1.FlavorAResult> {
    const a = this.flavorA();
    const name = datasourceName(ctx);
    const uid = datasourceUid(name);
    return this.undoing(async (undo) => {
      const folder = await a.ensureFolder(orgContainer(ctx.ownerId), ctx.ownerName);
      if (folder.created) undo(() => a.deleteFolder(folder.value.uid));
      const ds = await a.putDatasource(uid, name, backend, ctx.isDefault);
      if (ds.created) undo(() => a.deleteDatasource(uid));
      await this.store.put({ ...row('a', ctx, name), datasource_uid: uid, container: folder.value.uid, container_id: folder.value.id });
      return { folderId: folder.value.id, folderUid: folder.value.uid, datasource: name, datasourceUid: uid, url: backendUrl(backend) };
    });
  }

  async unregisterA(ctx: Ctx): Promise<void> {
    const a = this.flavorA();
    const key = keyOf('a', ctx);
    const found = await this.store.get(key);
    if (!found) throw new NotFoundError(`no flavor A metrics backend is registered for ${datasourceName(ctx)}`);
    await a.deleteDatasource(found.datasource_uid);
    await this.store.remove(key);
    // The folder goes with the organization's last datasource, unless dashboards were saved in it. It is tidying:
    // the datasource is already gone, so a failure here is logged, not answered.
    try {
      if (!(await this.store.containerInUse('a', found.container)) && (await a.folderIsEmpty(found.container)))
        await a.deleteFolder(found.container);
    } catch (err) {
      this.log.warn({ folder: found.container, reason: (err as Error).message }, 'metricsproxy: the empty folder could not be deleted');
    }
  }

  async registerB(ctx: Ctx, backend: metricsproxyV1.BackendConfig): Promise<metricsproxyV1.FlavorBResult> {
    const b = this.flavorB();
    const name = datasourceName(ctx);
    const secret = `${name}-secret`;
    return this.undoing(async (undo) => {
      const project = await b.ensureProject(orgContainer(ctx.ownerId), ctx.ownerName);
      if (project.created) undo(() => b.deleteProject(project.value));
      const s = await b.putSecret(project.value, secret, backend);
      if (s.created) undo(() => b.deleteSecret(project.value, secret));
      const ds = await b.putDatasource(project.value, name, secret, backend, ctx.isDefault);
      if (ds.created) undo(() => b.deleteDatasource(project.value, name));
      await this.store.put({ ...row('b', ctx, name), datasource_uid: '', container: project.value, container_id: 0 });
      return { projectName: project.value, folderName: ctx.ownerName, datasource: name, url: backendUrl(backend) };
    });
  }

  async unregisterB(ctx: Ctx): Promise<void> {
    const b = this.flavorB();
    const key = keyOf('b', ctx);
    const found = await this.store.get(key);
    if (!found) throw new NotFoundError(`no flavor B metrics backend is registered for ${datasourceName(ctx)}`);
    // The datasource first: a secret is never removed from under a datasource still using it.
    await b.deleteDatasource(found.container, found.datasource);
    await b.deleteSecret(found.container, `${found.datasource}-secret`);
    await this.store.remove(key);
  }

  lookup(ownerId: number, clusterUid: string, projectId: string) {
    return this.store.clientOrgOf(ownerId, clusterUid.toLowerCase(), projectId);
  }

  /** Warns, at start, of each flavor that is not configured. */
  warnUnconfigured(): void {
    for (const flavor of ['A', 'B'] as const) {
      const missing = missingSettings(this.config, flavor);
      if (missing.length)
        this.log.warn(
          { missing },
          `metricsproxy: flavor ${flavor} is not configured (${missing.join(', ')} unset); its register routes answer 503`,
        );
    }
  }

  private flavorA(): FlavorA {
    if (!this.a) throw notConfigured(this.config, 'A');
    return this.a;
  }

  private flavorB(): FlavorB {
    if (!this.b) throw notConfigured(this.config, 'B');
    return this.b;
  }

  /** Runs the steps; when one fails, the undo actions registered so far run newest first, then the failure is thrown. */
  private async undoing<T>(steps: (undo: (fn: () => Promise<void>) => void) => Promise<T>): Promise<T> {
    const undos: (() => Promise<void>)[] = [];
    try {
      return await steps((fn) => undos.push(fn));
    } catch (err) {
      for (const fn of undos.reverse()) {
        await fn().catch((e: unknown) =>
          // What could not be undone is named so an operator can remove it; never with the request's credentials.
          this.log.error({ reason: (e as Error).message }, 'metricsproxy: a step of a failed registration could not be undone'),
        );
      }
      throw err;
    }
  }
}

const notConfigured = (config: MetricsproxyConfig, flavor: 'A' | 'B') =>
  new UnavailableError(`metrics proxy flavor ${flavor} is not configured: ${missingSettings(config, flavor).join(' and ')} not set`);

const keyOf = (flavor: 'a' | 'b', ctx: Ctx) => ({
  flavor,
  owner_id: ctx.ownerId,
  cluster_uid: ctx.clusterUid.toLowerCase(),
  project_id: ctx.projectId,
});

const row = (flavor: 'a' | 'b', ctx: Ctx, datasource: string) => ({
  ...keyOf(flavor, ctx),
  hub_uid: ctx.hubUid.toLowerCase(),
  client_org_id: ctx.clientOrgId,
  datasource,
});
