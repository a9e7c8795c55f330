// The Helm chart as `helm template` renders it, with its default values and with values-production.yaml
//. `.ci/run` also runs `helm lint --strict` on both (`node .ci/helm.js check`).
import { APPS, containerEnv, find, helmTemplate, ofKind, PRODUCTION_VALUES, type AppName, type Manifest } from './chart';

const DATABASE = ['--set', 'postgres.url=postgres://platform:pw@postgres:5432/platform'];
/**
 * Apps that own a Postgres schema (all of them: the gateway's holds the failed sign-ins per address its replicas
 * share), and those on the bus (docs/architecture.md).
 */
const WITH_SCHEMA: AppName[] = [...APPS];
const ON_THE_BUS: AppName[] = ['authz', 'contracts-licensing', 'billing-dashboard', 'clusters'];
const GRPC_SERVICES: Record<AppName, string> = {
  gateway: 'platform.gateway.v1.GatewayService',
  authz: 'platform.authz.v1.AuthzService',
  'orgs-teams': 'platform.orgsteams.v1.OrgsTeamsService',
  'contracts-licensing': 'platform.contractslicensing.v1.ContractsLicensingService',
  'billing-dashboard': 'platform.billingdashboard.v1.BillingDashboardService',
  metricsproxy: 'platform.metricsproxy.v1.MetricsproxyService',
  'marketplace-listener': 'platform.marketplacelistener.v1.MarketplaceListenerService',
  clusters: 'platform.clusters.v1.ClustersService',
};

const selectorOf = (app: string) => ({
  'app.kubernetes.io/name': 'platform',
  'app.kubernetes.io/instance': 'platform',
  'app.kubernetes.io/component': app,
});

describe('the chart with its default values', () => {
  let manifests: Manifest[];
  beforeAll(() => {
    manifests = helmTemplate(DATABASE);
  });
  const deployment = (app: string) => find(manifests, 'Deployment', `platform-${app}`);

  it('refuses to render without a database', () => {
    expect(() => helmTemplate()).toThrow(/postgres.url is required/);
  });

  it.each(APPS)('%s: a Deployment running the app from the image, and its Service', (app) => {
    const d = deployment(app);
    expect(d.spec.selector.matchLabels).toEqual(selectorOf(app));
    expect(d.spec.template.metadata.labels).toMatchObject(selectorOf(app));
    const container = d.spec.template.spec.containers[0];
    expect(container.image).toBe('platform:0.1.0');
    expect(container.args).toEqual([app]);
    const service = find(manifests, 'Service', `platform-${app}`);
    expect(service.spec.selector).toEqual(selectorOf(app));
    expect(service.spec.ports).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'grpc', port: 50051, targetPort: 'grpc' }),
        expect.objectContaining({ name: 'metrics', port: 9464, targetPort: 'metrics' }),
      ]),
    );
  });

  it.each(APPS)('%s: gRPC startup, readiness (its own service) and liveness probes', (app) => {
    const c = deployment(app).spec.template.spec.containers[0];
    expect(c.startupProbe.grpc).toEqual({ port: 50051 });
    expect(c.readinessProbe.grpc).toEqual({ port: 50051, service: GRPC_SERVICES[app] });
    expect(c.livenessProbe.grpc).toEqual({ port: 50051 });
    expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBeGreaterThanOrEqual(60);
  });

  it.each(APPS)('%s: non-root, read-only root filesystem, no capabilities, only /tmp writable', (app) => {
    const pod = deployment(app).spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0].securityContext).toEqual({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.containers[0].volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '256Mi' } }]);
  });

  it.each(APPS)('%s: its own ServiceAccount without API rights; a token only where the app asks for one', (app) => {
    const pod = deployment(app).spec.template.spec;
    expect(pod.serviceAccountName).toBe(`platform-${app}`);
    expect(find(manifests, 'ServiceAccount', `platform-${app}`).automountServiceAccountToken).toBe(false);
    expect(pod.automountServiceAccountToken).toBe(app === 'clusters');
    expect(ofKind(manifests, 'Role')).toEqual([]);
    expect(ofKind(manifests, 'RoleBinding')).toEqual([]);
  });

  it.each(APPS)('%s: a PodDisruptionBudget over its pods that never blocks a drain of one replica', (app) => {
    const pdb = find(manifests, 'PodDisruptionBudget', `platform-${app}`);
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: selectorOf(app) } });
  });

  it.each(APPS)('%s: scraped on the metrics port (annotations, METRICS_PORT, a named container port)', (app) => {
    const template = deployment(app).spec.template;
    expect(template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9464',
      'prometheus.io/path': '/metrics',
    });
    const c = template.spec.containers[0];
    expect(c.ports).toContainEqual({ name: 'metrics', containerPort: 9464, protocol: 'TCP' });
    expect(containerEnv(manifests, template.spec).METRICS_PORT).toBe('9464');
  });

  it('gives each app only the secrets it reads', () => {
    const secretNames = (app: string) =>
      deployment(app)
        .spec.template.spec.containers[0].env.filter((e: any) => e.valueFrom?.secretKeyRef)
        .map((e: any) => e.name)
        .sort();
    // The gateway presigns contract document URLs with the bucket's credentials (docs/contracts.md), and counts
    // failed sign-ins in its schema (docs/authentication.md).
    expect(secretNames('gateway')).toEqual([
      'DATABASE_URL',
      'OBJECT_STORAGE_ACCESS_KEY_ID',
      'OBJECT_STORAGE_SECRET_ACCESS_KEY',
      'OBJECT_STORAGE_SIGNING_KEY',
    ]);
    expect(secretNames('authz')).toEqual(['DATABASE_URL', 'OPENFGA_API_TOKEN']);
    expect(secretNames('orgs-teams')).toEqual(
      [
        'DATABASE_URL',
        'OBJECT_STORAGE_ACCESS_KEY_ID',
        'OBJECT_STORAGE_SECRET_ACCESS_KEY',
        'OBJECT_STORAGE_SIGNING_KEY',
        'PLATFORM_ADMIN_EMAIL',
        'PLATFORM_ADMIN_PASSWORD',
        'PLATFORM_ADMIN_USERNAME',
        'SECRETS_ENCRYPTION_KEY',
      ].sort(),
    );
    // Installer download links are signed with the object signing key; the platform admin creates subscribers' organizations;
    // metered billing reports with the providers' credentials.
    expect(secretNames('marketplace-listener')).toEqual([
      'DATABASE_URL',
      'MARKETPLACE_API_SECRET',
      'OBJECT_STORAGE_SIGNING_KEY',
      'PLATFORM_ADMIN_USERNAME',
      'PROVIDERA_ACCESS_KEY_ID',
      'PROVIDERA_SECRET_ACCESS_KEY',
      'PROVIDERC_SERVICE_ACCOUNT_KEY',
    ]);
    // The license CA's key is sealed with the same key; an imported CA comes from the Secret too (optional);
    // contract documents go to the object storage.
    expect(secretNames('contracts-licensing')).toEqual(
      [
        'DATABASE_URL',
        'LICENSE_CA_CERT',
        'LICENSE_CA_KEY',
        'OBJECT_STORAGE_ACCESS_KEY_ID',
        'OBJECT_STORAGE_SECRET_ACCESS_KEY',
        'SECRETS_ENCRYPTION_KEY',
      ].sort(),
    );
    // The dashboard APIs' tokens (docs/metrics-proxy.md), optional.
    expect(secretNames('metricsproxy')).toEqual(['DATABASE_URL', 'FLAVORA_TOKEN', 'FLAVORB_TOKEN']);
    for (const app of ['billing-dashboard', 'clusters']) expect(secretNames(app)).toEqual(['DATABASE_URL']);
    // Every replica of an app seals and signs with the same keys, kept in the Secret.
    const env = containerEnv(manifests, deployment('orgs-teams').spec.template.spec);
    expect(Buffer.from(env.SECRETS_ENCRYPTION_KEY, 'base64')).toHaveLength(32);
    expect(env.OBJECT_STORAGE_SIGNING_KEY.length).toBeGreaterThanOrEqual(32);
    expect(env.DATABASE_URL).toBe('postgres://platform:pw@postgres:5432/platform');
  });

  it('migrates in a Job apart from serving: a hook after install and before each upgrade, every app with a schema', () => {
    const job = find(manifests, 'Job', 'platform-migrations');
    expect(job.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'post-install,pre-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation',
    });
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    const c = pod.containers[0];
    expect(c.image).toBe('platform:0.1.0');
    expect(c.args[0]).toBe('migrate');
    expect([...c.args.slice(1)].sort()).toEqual([...WITH_SCHEMA].sort());
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    const env = containerEnv(manifests, pod);
    expect(env.DATABASE_URL).toBe('postgres://platform:pw@postgres:5432/platform');
    expect(env).not.toHaveProperty('PLATFORM_ADMIN_PASSWORD');
  });

  it('renders no NetworkPolicy, HPA or ServiceMonitor unless asked, and leaves replicas to an HPA when asked', () => {
    expect(ofKind(manifests, 'NetworkPolicy')).toEqual([]);
    expect(ofKind(manifests, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(ofKind(manifests, 'ServiceMonitor')).toEqual([]);
    expect(deployment('gateway').spec.replicas).toBe(2);

    const scaled = helmTemplate([
      ...DATABASE,
      '--set',
      'apps.gateway.autoscaling.enabled=true',
      '--set',
      'apps.gateway.autoscaling.maxReplicas=7',
    ]);
    expect(find(scaled, 'Deployment', 'platform-gateway').spec).not.toHaveProperty('replicas');
    expect(find(scaled, 'HorizontalPodAutoscaler', 'platform-gateway').spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'platform-gateway' },
      minReplicas: 2,
      maxReplicas: 7,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 75 } } }],
    });
  });

  it('binds a Role to an app’s ServiceAccount only when its rbac.rules list rights', () => {
    const rules = [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }];
    const withRbac = helmTemplate([...DATABASE, '--set-json', `apps.clusters.rbac.rules=${JSON.stringify(rules)}`]);
    expect(find(withRbac, 'Role', 'platform-clusters').rules).toEqual(rules);
    expect(find(withRbac, 'RoleBinding', 'platform-clusters')).toMatchObject({
      roleRef: { kind: 'Role', name: 'platform-clusters' },
      subjects: [{ kind: 'ServiceAccount', name: 'platform-clusters', namespace: 'platform' }],
    });
    expect(ofKind(withRbac, 'Role')).toHaveLength(1);
  });

  it('moves the metrics port everywhere with metrics.port', () => {
    const moved = helmTemplate([...DATABASE, '--set', 'metrics.port=9100']);
    const template = find(moved, 'Deployment', 'platform-authz').spec.template;
    expect(template.metadata.annotations['prometheus.io/port']).toBe('9100');
    expect(containerEnv(moved, template.spec).METRICS_PORT).toBe('9100');
    expect(find(moved, 'Service', 'platform-authz').spec.ports).toContainEqual(expect.objectContaining({ name: 'metrics', port: 9100 }));
  });
});

describe('the chart with values-production.yaml', () => {
  let manifests: Manifest[];
  beforeAll(() => {
    manifests = helmTemplate(['-f', PRODUCTION_VALUES]);
  });
  const policy = (app: string) => find(manifests, 'NetworkPolicy', `platform-${app}`).spec;
  const enabled = APPS.filter((a) => a !== 'marketplace-listener');
  /** Ingress rules of an app's policy that admit `port`. */
  const admitting = (app: string, port: string) => policy(app).ingress.filter((r: any) => r.ports.some((p: any) => p.port === port));
  const egressPorts = (app: string) => policy(app).egress.flatMap((r: any) => r.ports.map((p: any) => p.port));

  it('renders without errors: secrets from the existing Secret, no chart Secret, the listener left out', () => {
    expect(ofKind(manifests, 'Secret')).toEqual([]);
    expect(
      ofKind(manifests, 'Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(enabled.map((a) => `platform-${a}`).sort());
    const env = (app: string) => find(manifests, 'Deployment', `platform-${app}`).spec.template.spec.containers[0].env;
    expect(env('orgs-teams')).toContainEqual({
      name: 'SECRETS_ENCRYPTION_KEY',
      valueFrom: { secretKeyRef: { name: 'platform-secrets', key: 'SECRETS_ENCRYPTION_KEY' } },
    });
    expect(find(manifests, 'Job', 'platform-migrations').spec.template.spec.containers[0].env).toEqual([
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'platform-secrets', key: 'DATABASE_URL' } } },
    ]);
    expect(find(manifests, 'Job', 'platform-migrations').spec.template.spec.containers[0].args).not.toContain('marketplace-listener');
    expect(find(manifests, 'ConfigMap', 'platform-config').data).toMatchObject({
      DEPLOYMENT_TYPE: 'SelfHostedProduction',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability.svc.cluster.local:4318',
    });
  });

  it('autoscales the gateway and authz, keeps a PDB per app, and has Prometheus Operator scrape every app', () => {
    expect(
      ofKind(manifests, 'HorizontalPodAutoscaler')
        .map((h) => h.metadata.name)
        .sort(),
    ).toEqual(['platform-authz', 'platform-gateway']);
    expect(ofKind(manifests, 'PodDisruptionBudget')).toHaveLength(enabled.length);
    const monitor = find(manifests, 'ServiceMonitor', 'platform');
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
    expect(monitor.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'platform', 'app.kubernetes.io/instance': 'platform' });
    expect(monitor.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' }]);
  });

  it('has a NetworkPolicy for every app and for the migration Job, each covering ingress and egress', () => {
    expect(
      ofKind(manifests, 'NetworkPolicy')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual([...enabled.map((a) => `platform-${a}`), 'platform-migrations'].sort());
    for (const p of ofKind(manifests, 'NetworkPolicy')) expect(p.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(find(manifests, 'NetworkPolicy', 'platform-migrations').spec).toMatchObject({
      podSelector: { matchLabels: selectorOf('migrations') },
      ingress: [],
    });
  });

  it('admits gRPC to a backend only from its callers: the gateway, and the backends that call it', () => {
    // Who calls whom besides the gateway (in the order the chart lists apps: by name).
    const backendCallers: Record<string, string[]> = {
      authz: ['clusters', 'gateway', 'orgs-teams'],
      'orgs-teams': ['billing-dashboard', 'clusters', 'gateway'],
      clusters: ['billing-dashboard', 'contracts-licensing', 'gateway'],
      'billing-dashboard': ['contracts-licensing', 'gateway'],
      'contracts-licensing': ['billing-dashboard', 'gateway'],
    };
    for (const app of enabled.filter((a) => a !== 'gateway')) {
      const rules = admitting(app, 'grpc');
      expect(rules).toHaveLength(1);
      const callers = rules[0].from.map((peer: any) => peer.podSelector.matchLabels['app.kubernetes.io/component']);
      expect(callers).toEqual(backendCallers[app] ?? ['gateway']);
    }
    // Nothing calls the gateway over gRPC.
    expect(admitting('gateway', 'grpc')).toEqual([]);
  });

  it('admits HTTP to the gateway only from the ingress controller, and metrics only from the monitoring namespace', () => {
    expect(admitting('gateway', 'http')).toEqual([
      {
        ports: [{ port: 'http', protocol: 'TCP' }],
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
      },
    ]);
    for (const app of enabled) {
      expect(admitting(app, 'metrics')).toEqual([
        {
          ports: [{ port: 'metrics', protocol: 'TCP' }],
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        },
      ]);
      if (app !== 'gateway') expect(admitting(app, 'http')).toEqual([]);
    }
  });

  it('lets the gateway reach the backends, the backends their database, bus and OpenFGA, and nothing else', () => {
    const gatewayGrpc = policy('gateway').egress.find((r: any) => r.ports.some((p: any) => p.port === 50051));
    expect(gatewayGrpc.to.map((peer: any) => peer.podSelector.matchLabels['app.kubernetes.io/component']).sort()).toEqual(
      enabled.filter((a) => a !== 'gateway').sort(),
    );
    for (const app of enabled) {
      const ports = egressPorts(app);
      expect(ports.includes(5432)).toBe(WITH_SCHEMA.includes(app));
      expect(ports.includes(4222)).toBe(ON_THE_BUS.includes(app));
      expect(ports.includes(8081)).toBe(app === 'authz'); // OpenFGA's gRPC port
      // object storage; metricsproxy: the dashboard APIs
      expect(ports.includes(443)).toBe(['orgs-teams', 'contracts-licensing', 'gateway', 'metricsproxy'].includes(app));
      expect(ports.includes(50051)).toBe(['gateway', 'orgs-teams', 'clusters', 'billing-dashboard', 'contracts-licensing'].includes(app));
      // DNS and the trace collector for everyone; nothing else.
      expect(ports).toEqual(expect.arrayContaining([53, 4318]));
      expect(new Set(ports)).toEqual(new Set(ports.filter((p: number) => [53, 4318, 5432, 4222, 8080, 8081, 443, 50051].includes(p))));
    }
    expect(policy('orgs-teams').egress.find((r: any) => r.ports.some((p: any) => p.port === 50051)).to).toEqual([
      { podSelector: { matchLabels: selectorOf('authz') } },
    ]);
    expect(
      find(manifests, 'NetworkPolicy', 'platform-migrations').spec.egress.flatMap((r: any) => r.ports.map((p: any) => p.port)),
    ).toEqual(expect.arrayContaining([53, 5432]));
  });

  it('lets the marketplace listener, and no other app, reach the metering providers and the central server over HTTPS on marketplace deployments', () => {
    const LISTENER = ['--set', 'apps.marketplace-listener.enabled=true'];
    const listenerEgress = (rendered: Manifest[]) => find(rendered, 'NetworkPolicy', 'platform-marketplace-listener').spec.egress;
    const https = (rule: any) => rule.ports.some((p: any) => p.port === 443);
    // Elsewhere the listener serves no marketplace and calls nothing outside the chart.
    const elsewhere = helmTemplate(['-f', PRODUCTION_VALUES, ...LISTENER]);
    expect(listenerEgress(elsewhere).filter(https)).toEqual([]);
    for (const type of ['ProviderAMarketplace', 'ProviderBMarketplace', 'ProviderCMarketplace']) {
      const rendered = helmTemplate(['-f', PRODUCTION_VALUES, ...LISTENER, '--set', `deployment.type=${type}`]);
      const egress = listenerEgress(rendered);
      // Any IPv4 or IPv6 address (the clouds' endpoints move), on 443 only.
      expect(egress.filter(https)).toEqual([
        { ports: [{ port: 443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }] },
      ]);
      // Besides: DNS (kube-dns, to resolve them), its callees, its database and the trace collector, as before.
      expect(egress.filter((r: any) => !https(r))).toEqual(listenerEgress(elsewhere));
      expect(egress[0]).toMatchObject({ to: [{ podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }] });
      expect(new Set(egress.flatMap((r: any) => r.ports.map((p: any) => p.port)))).toEqual(new Set([53, 50051, 5432, 443, 4318]));
      // No other app's policy changes.
      for (const app of enabled) {
        expect(find(rendered, 'NetworkPolicy', `platform-${app}`).spec).toEqual(find(elsewhere, 'NetworkPolicy', `platform-${app}`).spec);
      }
    }
    // The destinations and ports are the installer's to set (e.g. a private endpoint's range).
    const narrowed = listenerEgress(
      helmTemplate([
        '-f',
        PRODUCTION_VALUES,
        ...LISTENER,
        '--set',
        'deployment.type=ProviderAMarketplace',
        '--set-json',
        'networkPolicy.marketplaceApis.to=[{"ipBlock":{"cidr":"203.0.113.0/24"}}]',
        '--set-json',
        'networkPolicy.marketplaceApis.ports=[{"port":443,"protocol":"TCP"},{"port":8443,"protocol":"TCP"}]',
      ]),
    );
    expect(narrowed.filter(https)).toEqual([
      {
        ports: [
          { port: 443, protocol: 'TCP' },
          { port: 8443, protocol: 'TCP' },
        ],
        to: [{ ipBlock: { cidr: '203.0.113.0/24' } }],
      },
    ]);
  });
});
