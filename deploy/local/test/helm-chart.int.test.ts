// The Helm chart as `helm template` renders it, with its default values and with values-production.yaml,
// checked against the Kubernetes API schemas. `.ci/run` also runs `helm lint --strict` on both
// (`node .ci/helm.js check`).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { assertOpenFgaSettings, authzApp } from '@platform/app-authz';
import { orgsTeamsApp } from '@platform/app-orgs-teams';
import { METHOD_POLICIES } from '@platform/proto';
import { loadConfig } from '@platform/service-kit';
import {
  APPS,
  CHART,
  containerEnv,
  find,
  helmTemplate,
  helmTemplateAsync,
  helmTemplateText,
  ofKind,
  parseManifests,
  PRODUCTION_VALUES,
  ROOT,
  validateAgainstKubernetes,
  type AppName,
  type Manifest,
} from './chart';

const DATABASE = ['--set', 'postgres.url=postgres://platform:pw@postgres:5432/platform'];
/**
 * Apps that own a Postgres schema (all of them: the gateway's holds the failed sign-ins per address its replicas
 * share), and those on the bus (docs/architecture.md).
 */
const WITH_SCHEMA: AppName[] = [...APPS];
const ON_THE_BUS: AppName[] = [
  'gateway',
  'authz',
  'orgs-teams',
  'contracts-licensing',
  'billing-dashboard',
  'metricsproxy',
  'marketplace-listener',
  'clusters',
];
const GRPC_SERVICES: Record<AppName, string> = {
  gateway: 'platformadmin.gateway.v1.GatewayService',
  authz: 'platformadmin.authz.v1.AuthzService',
  'orgs-teams': 'platformadmin.orgsteams.v1.OrgsTeamsService',
  'contracts-licensing': 'platformadmin.contractslicensing.v1.ContractsLicensingService',
  'billing-dashboard': 'platformadmin.billingdashboard.v1.BillingDashboardService',
  metricsproxy: 'platformadmin.metricsproxy.v1.MetricsproxyService',
  'marketplace-listener': 'platformadmin.marketplacelistener.v1.MarketplaceListenerService',
  clusters: 'platformadmin.clusters.v1.ClustersService',
};

/** App keys as an operator makes them (`openssl rand -base64 32`). */
const KEY_A = Buffer.alloc(32, 0xa).toString('base64');
const KEY_B = Buffer.alloc(32, 0xb).toString('base64');
/** The apps other teams' services may call (their public gRPC methods), and the services the front door routes to each. */
const PUBLIC_APPS: AppName[] = ['authz', 'contracts-licensing', 'orgs-teams'];
const PUBLIC_SERVICES: Record<string, string[]> = {
  authz: ['platformadmin.authz.v1.AuthzService', 'platformadmin.authz.v1.RolesService'],
  'contracts-licensing': ['platformadmin.contractslicensing.v1.LicensingService'],
  'orgs-teams': ['platformadmin.orgsteams.v1.OrganizationsService'],
};
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
/** The value of one env entry of a Deployment's or Job's first container, as rendered (not resolved). */
const envEntry = (m: Manifest, name: string) => m.spec.template.spec.containers[0].env.find((e: any) => e.name === name);

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
    // Besides the app keys, which every app holds (below).
    const secretNames = (app: string) =>
      deployment(app)
        .spec.template.spec.containers[0].env.filter((e: any) => e.valueFrom?.secretKeyRef && e.name !== 'PLATFORM_APP_KEYS')
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
    // The embedded engine by default: no OpenFGA token.
    expect(secretNames('authz')).toEqual(['DATABASE_URL']);
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
    // contract documents go to the object storage; notice mails to SMTP_URL, which carries the SMTP credentials.
    expect(secretNames('contracts-licensing')).toEqual(
      [
        'DATABASE_URL',
        'LICENSE_CA_CERT',
        'LICENSE_CA_KEY',
        'OBJECT_STORAGE_ACCESS_KEY_ID',
        'OBJECT_STORAGE_SECRET_ACCESS_KEY',
        'SECRETS_ENCRYPTION_KEY',
        'SMTP_URL',
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

  it('starts authz on its embedded engine: no OpenFGA setting, no setup Job, a configuration authz accepts', () => {
    const env = containerEnv(manifests, deployment('authz').spec.template.spec);
    expect(Object.keys(env).filter((k) => k.startsWith('OPENFGA_'))).toEqual([]);
    expect(() => assertOpenFgaSettings(loadConfig(authzApp.env, env))).not.toThrow();
    for (const app of APPS) {
      expect(deployment(app).spec.template.spec.containers[0].envFrom).toEqual([{ configMapRef: { name: 'platform-config' } }]);
    }
    expect(manifests.filter((m) => m.metadata.name.includes('openfga'))).toEqual([]);
    // authz reaches no OpenFGA either.
    const policies = helmTemplate([...DATABASE, '--set', 'networkPolicy.enabled=true']);
    const egressPorts = find(policies, 'NetworkPolicy', 'platform-authz').spec.egress.flatMap((r: any) => r.ports.map((p: any) => p.port));
    expect(egressPorts).not.toContain(8081);
  });

  it('passes the notification settings to contracts-licensing only, the SMTP URL through the Secret', () => {
    const set = [
      '--set',
      'notifications.smtpUrl=smtps://mailer:pw@mail.example.com:465',
      '--set',
      'notifications.smtpFrom=Ops <ops@example.com>',
    ];
    const rendered = helmTemplate([...DATABASE, ...set, '--set', 'notifications.sweepIntervalMs=5000']);
    const template = find(rendered, 'Deployment', 'platform-contracts-licensing').spec.template;
    const env = containerEnv(rendered, template.spec);
    expect(env).toMatchObject({
      SMTP_URL: 'smtps://mailer:pw@mail.example.com:465',
      SMTP_FROM: 'Ops <ops@example.com>',
      SMTP_REQUIRE_TLS: 'true',
      NOTICE_SWEEP_INTERVAL_MS: '5000',
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'false',
    });
    const plain = template.spec.containers[0].env.find((e: any) => e.name === 'SMTP_URL');
    expect(plain.value).toBeUndefined();
    expect(plain.valueFrom.secretKeyRef.name).toBe('platform-secrets');
    const gateway = find(rendered, 'Deployment', 'platform-gateway').spec.template.spec;
    expect(Object.keys(containerEnv(rendered, gateway)).filter((k) => /^(SMTP|WEBHOOK|NOTICE)_/.test(k))).toEqual([]);
    expect(() => helmTemplate([...DATABASE, '--set', 'notifications.smtpUrl=http://mail.example.com'])).toThrow(/smtpUrl/);
  });

  it('moves the metrics port everywhere with metrics.port', () => {
    const moved = helmTemplate([...DATABASE, '--set', 'metrics.port=9100']);
    const template = find(moved, 'Deployment', 'platform-authz').spec.template;
    expect(template.metadata.annotations['prometheus.io/port']).toBe('9100');
    expect(containerEnv(moved, template.spec).METRICS_PORT).toBe('9100');
    expect(find(moved, 'Service', 'platform-authz').spec.ports).toContainEqual(expect.objectContaining({ name: 'metrics', port: 9100 }));
  });

  it('has an app give up its stop 2 s before the pod’s grace period ends, after its drain', () => {
    const env = (set: string[]) => {
      const rendered = helmTemplate([...DATABASE, ...set]);
      const pod = find(rendered, 'Deployment', 'platform-orgs-teams').spec.template.spec;
      const { SHUTDOWN_DELAY_MS, SHUTDOWN_TIMEOUT_MS } = containerEnv(rendered, pod);
      return { grace: pod.terminationGracePeriodSeconds, SHUTDOWN_DELAY_MS, SHUTDOWN_TIMEOUT_MS };
    };
    expect(env([])).toEqual({ grace: 30, SHUTDOWN_DELAY_MS: '5000', SHUTDOWN_TIMEOUT_MS: '23000' });
    expect(env(['--set', 'terminationGracePeriodSeconds=60', '--set', 'shutdownDelaySeconds=10'])).toEqual({
      grace: 60,
      SHUTDOWN_DELAY_MS: '10000',
      SHUTDOWN_TIMEOUT_MS: '48000',
    });
    // A grace period shorter than the drain leaves the stop the least it may have.
    expect(env(['--set', 'terminationGracePeriodSeconds=3']).SHUTDOWN_TIMEOUT_MS).toBe('1000');
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
      { name: 'PLATFORM_APP_KEYS', valueFrom: { secretKeyRef: { name: 'platform-app-keys', key: 'PLATFORM_APP_KEYS', optional: true } } },
    ]);
    expect(find(manifests, 'Job', 'platform-migrations').spec.template.spec.containers[0].args).not.toContain('marketplace-listener');
    expect(find(manifests, 'ConfigMap', 'platform-config').data).toMatchObject({
      DEPLOYMENT_TYPE: 'SelfHostedProduction',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability.svc.cluster.local:4318',
    });
  });

  it('tells every app its public URL: publicUrl, else the ingress host, else none', () => {
    const publicUrl = (set: string[]) => find(helmTemplate([...DATABASE, ...set]), 'ConfigMap', 'platform-config').data!.PUBLIC_URL;
    const ingress = ['--set', 'ingress.enabled=true', '--set', 'ingress.host=console.example.com'];
    expect(publicUrl([...ingress, '--set', 'ingress.tls.enabled=true'])).toBe('https://console.example.com/');
    expect(publicUrl(ingress)).toBe('http://console.example.com/');
    expect(publicUrl([...ingress, '--set', 'publicUrl=https://platform.example.com/'])).toBe('https://platform.example.com/');
    expect(publicUrl([])).toBeUndefined();
    expect(() => helmTemplate([...DATABASE, '--set', 'publicUrl=https://platform.example.com/sub/'])).toThrow(/publicUrl/);
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
    ).toEqual([...enabled.map((a) => `platform-${a}`), 'platform-migrations', 'platform-openfga-setup'].sort());
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
      'orgs-teams': ['billing-dashboard', 'clusters', 'contracts-licensing', 'gateway'],
      clusters: ['billing-dashboard', 'contracts-licensing', 'gateway', 'orgs-teams'],
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
    // ... and from the `helm test` Pod.
    expect(admitting('gateway', 'http')).toEqual([
      {
        ports: [{ port: 'http', protocol: 'TCP' }],
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
      },
      { ports: [{ port: 'http', protocol: 'TCP' }], from: [{ podSelector: { matchLabels: selectorOf('test') } }] },
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
      { podSelector: { matchLabels: selectorOf('clusters') } },
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
      // Besides: DNS (kube-dns, to resolve them), its callees, its database, the bus and the trace collector, as before.
      expect(egress.filter((r: any) => !https(r))).toEqual(listenerEgress(elsewhere));
      expect(egress[0]).toMatchObject({ to: [{ podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }] });
      expect(new Set(egress.flatMap((r: any) => r.ports.map((p: any) => p.port)))).toEqual(new Set([53, 50051, 5432, 4222, 443, 4318]));
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

describe('the apps’ keys and their gRPC ports', () => {
  it('gives every app and the migration Job the release’s keys from one Secret, made at install; every app listens on its pod’s addresses', () => {
    const manifests = helmTemplate(DATABASE);
    const secret = find(manifests, 'Secret', 'platform-app-keys');
    const keys = Buffer.from(secret.data!.PLATFORM_APP_KEYS, 'base64').toString();
    // One key of 32 random bytes.
    expect(Buffer.from(keys, 'base64')).toHaveLength(32);
    // Not among the other secrets: existingSecret never holds it.
    expect(find(manifests, 'Secret', 'platform-secrets').data).not.toHaveProperty('PLATFORM_APP_KEYS');
    for (const app of APPS) {
      const d = find(manifests, 'Deployment', `platform-${app}`);
      // Required: a pod without the keys would make one of its own, and no other pod could call it.
      expect(envEntry(d, 'PLATFORM_APP_KEYS')).toEqual({
        name: 'PLATFORM_APP_KEYS',
        valueFrom: { secretKeyRef: { name: 'platform-app-keys', key: 'PLATFORM_APP_KEYS' } },
      });
      const env = containerEnv(manifests, d.spec.template.spec);
      expect(env.PLATFORM_APP_KEYS).toBe(keys);
      expect(env.GRPC_HOST).toBe('0.0.0.0');
      // A change of keys rolls the app.
      expect(d.spec.template.metadata.annotations['checksum/app-keys']).toBe(sha256(keys));
    }
    // What the apps make of it (authz's configuration, as every app's: service-kit's serviceEnv).
    const authz = loadConfig(authzApp.env, containerEnv(manifests, find(manifests, 'Deployment', 'platform-authz').spec.template.spec));
    expect(authz.PLATFORM_APP_KEYS).toEqual([keys]);
    expect(authz.GRPC_HOST).toBe('0.0.0.0');
    // The migration Job too, optionally: it runs before an upgrade, when the upgrade that brings the Secret has not
    // made it yet.
    const job = find(manifests, 'Job', 'platform-migrations');
    expect(envEntry(job, 'PLATFORM_APP_KEYS').valueFrom.secretKeyRef).toEqual({
      name: 'platform-app-keys',
      key: 'PLATFORM_APP_KEYS',
      optional: true,
    });
    expect(containerEnv(manifests, job.spec.template.spec).PLATFORM_APP_KEYS).toBe(keys);
  });

  it('takes the keys from appKeys.keys, the first signing, and rolls every app when their order changes', () => {
    const render = (keys: string[]) => helmTemplate([...DATABASE, '--set-json', `appKeys.keys=${JSON.stringify(keys)}`]);
    const rotating = render([KEY_A, KEY_B]);
    const env = containerEnv(rotating, find(rotating, 'Deployment', 'platform-orgs-teams').spec.template.spec);
    expect(env.PLATFORM_APP_KEYS).toBe(`${KEY_A},${KEY_B}`);
    expect(loadConfig(authzApp.env, env).PLATFORM_APP_KEYS).toEqual([KEY_A, KEY_B]);
    const checksum = (m: Manifest[]) => find(m, 'Deployment', 'platform-gateway').spec.template.metadata.annotations['checksum/app-keys'];
    const swapped = render([KEY_B, KEY_A]);
    expect(checksum(swapped)).not.toBe(checksum(rotating));
    expect(checksum(render([KEY_B]))).not.toBe(checksum(swapped));
    // Nothing random: the same keys render the same manifests (GitOps).
    expect(checksum(render([KEY_A, KEY_B]))).toBe(checksum(rotating));
    // A key too short to sign with, or keys joined by a comma in one entry, are refused.
    expect(() => render(['c2hvcnQ='])).toThrow(/appKeys/);
    expect(() => render([`${KEY_A},${KEY_B}`])).toThrow(/appKeys/);
  });

  it('takes the keys from a Secret of your own instead, whatever existingSecret says, and renders none', () => {
    const manifests = helmTemplate([
      ...DATABASE,
      '--set',
      'existingSecret=platform-secrets-own',
      '--set',
      'appKeys.existingSecret=app-keys',
      '--set',
      'appKeys.existingSecretKey=keys',
    ]);
    expect(manifests.filter((m) => m.metadata.name === 'platform-app-keys')).toEqual([]);
    for (const app of APPS) {
      expect(envEntry(find(manifests, 'Deployment', `platform-${app}`), 'PLATFORM_APP_KEYS').valueFrom.secretKeyRef).toEqual({
        name: 'app-keys',
        key: 'keys',
      });
    }
    expect(envEntry(find(manifests, 'Job', 'platform-migrations'), 'PLATFORM_APP_KEYS').valueFrom.secretKeyRef).toEqual({
      name: 'app-keys',
      key: 'keys',
      optional: true,
    });
  });

  it('takes the keys from existingSecret, as every other secret, when nothing else names them: no Secret of the chart, renders alike', () => {
    const args = ['--set', 'existingSecret=platform-secrets-own'];
    const rendered = helmTemplateText(args);
    // Nothing generated: two renders (GitOps: Argo CD renders at every sync) are the same, byte for byte.
    expect(helmTemplateText(args)).toBe(rendered);
    const manifests = parseManifests(rendered);
    expect(ofKind(manifests, 'Secret')).toEqual([]);
    const fromExisting = { name: 'platform-secrets-own', key: 'PLATFORM_APP_KEYS' };
    const checksums = new Set<string>();
    for (const app of APPS) {
      const d = find(manifests, 'Deployment', `platform-${app}`);
      expect(envEntry(d, 'PLATFORM_APP_KEYS').valueFrom.secretKeyRef).toEqual(fromExisting);
      checksums.add(d.spec.template.metadata.annotations['checksum/app-keys']);
    }
    // `helm template` cannot look the Secret up: one checksum for every app, the same at every render (above).
    expect(checksums.size).toBe(1);
    expect(envEntry(find(manifests, 'Job', 'platform-migrations'), 'PLATFORM_APP_KEYS').valueFrom.secretKeyRef).toEqual({
      ...fromExisting,
      optional: true,
    });
    // appKeys.existingSecret wins over existingSecret (above), and so do keys given as values, in the chart's Secret.
    const given = helmTemplate([...args, '--set-json', `appKeys.keys=${JSON.stringify([KEY_A])}`]);
    expect(ofKind(given, 'Secret').map((m) => m.metadata.name)).toEqual(['platform-app-keys']);
    expect(Buffer.from(find(given, 'Secret', 'platform-app-keys').data!.PLATFORM_APP_KEYS, 'base64').toString()).toBe(KEY_A);
    expect(envEntry(find(given, 'Deployment', 'platform-authz'), 'PLATFORM_APP_KEYS').valueFrom.secretKeyRef).toEqual({
      name: 'platform-app-keys',
      key: 'PLATFORM_APP_KEYS',
    });
  });
});

describe('other teams’ services on the public gRPC methods', () => {
  const CLIENTS = ['--set-json', 'grpc.clientNamespaces=["team-a","team-b"]'];
  const policies = (args: string[]) => helmTemplate(['-f', PRODUCTION_VALUES, ...args]);
  const policy = (m: Manifest[], app: string) => find(m, 'NetworkPolicy', `platform-${app}`).spec;
  const enabled = APPS.filter((a) => a !== 'marketplace-listener');
  /** The ingress rules of an app's policy on the gRPC port that admit peers by namespace. */
  const fromNamespaces = (m: Manifest[], app: string) =>
    policy(m, app).ingress.filter(
      (r: any) => r.ports.some((p: any) => p.port === 'grpc') && r.from?.some((peer: any) => peer.namespaceSelector),
    );
  /** The apps an app's policy lets it call over gRPC. */
  const callees = (m: Manifest[], app: string) =>
    (policy(m, app).egress.find((r: any) => r.ports.some((p: any) => p.port === 50051))?.to ?? [])
      .map((peer: any) => peer.podSelector.matchLabels['app.kubernetes.io/component'])
      .sort();
  const callers = (m: Manifest[], app: string) =>
    (policy(m, app).ingress.find((r: any) => r.from?.some((peer: any) => peer.podSelector && !peer.namespaceSelector)) ?? { from: [] }).from
      .filter((peer: any) => peer.podSelector?.matchLabels?.['app.kubernetes.io/instance'] === 'platform')
      .map((peer: any) => peer.podSelector.matchLabels['app.kubernetes.io/component'])
      .sort();

  it('admits no other namespace to any app’s gRPC port unless grpc.clientNamespaces lists some', () => {
    const manifests = policies([]);
    for (const app of enabled) expect(fromNamespaces(manifests, app)).toEqual([]);
  });

  it('admits the pods of the listed namespaces to the gRPC port of authz, orgs-teams and contracts-licensing, and of no other app', () => {
    const without = policies([]);
    const manifests = policies(CLIENTS);
    for (const app of PUBLIC_APPS) {
      expect(fromNamespaces(manifests, app)).toEqual([
        {
          from: [
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } } },
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-b' } } },
          ],
          ports: [{ port: 'grpc', protocol: 'TCP' }],
        },
      ]);
    }
    for (const app of enabled.filter((a) => !PUBLIC_APPS.includes(a))) {
      expect(policy(manifests, app)).toEqual(policy(without, app));
    }
    // Narrowed to some pods of those namespaces.
    const selected = policies([...CLIENTS, '--set-json', 'grpc.clientPodSelector={"matchLabels":{"platform-client":"true"}}']);
    expect(fromNamespaces(selected, 'authz')[0].from).toEqual(
      ['team-a', 'team-b'].map((ns) => ({
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        podSelector: { matchLabels: { 'platform-client': 'true' } },
      })),
    );
  });

  it('lets the public apps reach orgs-teams, which checks a service account’s token, and authz, which answers what it holds', () => {
    const without = policies([]);
    const manifests = policies(CLIENTS);
    expect(callees(without, 'authz')).toEqual([]);
    expect(callees(manifests, 'authz')).toEqual(['orgs-teams']);
    // contracts-licensing calls orgs-teams anyway (license holders' accounts).
    expect(callees(manifests, 'contracts-licensing')).toEqual(
      [...new Set([...callees(without, 'contracts-licensing'), 'authz', 'orgs-teams'])].sort(),
    );
    // orgs-teams asks its own Service.
    expect(callees(manifests, 'orgs-teams')).toEqual([...callees(without, 'orgs-teams'), 'orgs-teams'].sort());
    expect(callers(manifests, 'orgs-teams')).toEqual(
      [...new Set([...callers(without, 'orgs-teams'), 'authz', 'contracts-licensing', 'orgs-teams'])].sort(),
    );
    expect(callers(manifests, 'authz')).toEqual([...callers(without, 'authz'), 'contracts-licensing'].sort());
    // The others call as before.
    for (const app of enabled.filter((a) => !PUBLIC_APPS.includes(a))) expect(callees(manifests, app)).toEqual(callees(without, app));
  });

  it('admits the front door’s proxies to the public apps’ gRPC port: grpc.frontDoorFrom, else the ingress controller', () => {
    const FRONT_DOOR = ['--set', 'grpc.ingress.enabled=true'];
    const proxies = (m: Manifest[], app: string) =>
      policy(m, app).ingress.filter(
        (r: any) => r.ports.some((p: any) => p.port === 'grpc') && !r.from?.some((peer: any) => peer.podSelector),
      );
    const viaIngress = policies(FRONT_DOOR);
    for (const app of PUBLIC_APPS) {
      expect(proxies(viaIngress, app)).toEqual([
        {
          ports: [{ port: 'grpc', protocol: 'TCP' }],
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
        },
      ]);
    }
    for (const app of enabled.filter((a) => !PUBLIC_APPS.includes(a))) expect(proxies(viaIngress, app)).toEqual([]);
    // The proxied calls carry service accounts' tokens too.
    expect(callees(viaIngress, 'authz')).toEqual(['orgs-teams']);
    const gateway = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'gateway-system' } } };
    const viaRoute = policies([
      '--set',
      'grpc.grpcRoute.enabled=true',
      '--set-json',
      'grpc.grpcRoute.parentRefs=[{"name":"shared","namespace":"gateway-system"}]',
      '--set-json',
      `grpc.frontDoorFrom=${JSON.stringify([gateway])}`,
    ]);
    expect(proxies(viaRoute, 'orgs-teams')).toEqual([{ ports: [{ port: 'grpc', protocol: 'TCP' }], from: [gateway] }]);
  });

  describe('Kubernetes ServiceAccount tokens', () => {
    const TOKENS = [...DATABASE, '--set', 'grpc.kubernetesTokens.enabled=true'];

    it('are off by default: no audience, no token mounted in orgs-teams, no cluster-wide binding', () => {
      const manifests = helmTemplate(DATABASE);
      const orgsTeams = find(manifests, 'Deployment', 'platform-orgs-teams');
      expect(containerEnv(manifests, orgsTeams.spec.template.spec)).not.toHaveProperty('KUBERNETES_TOKEN_AUDIENCE');
      expect(orgsTeams.spec.template.spec.automountServiceAccountToken).toBe(false);
      expect(ofKind(manifests, 'ClusterRoleBinding')).toEqual([]);
    });

    it('give orgs-teams the audience, its own token and TokenReview rights (system:auth-delegator), and no other app anything', () => {
      const manifests = helmTemplate([...TOKENS, '--set', 'grpc.kubernetesTokens.audience=platform.example.com']);
      const orgsTeams = find(manifests, 'Deployment', 'platform-orgs-teams').spec.template.spec;
      expect(orgsTeams.automountServiceAccountToken).toBe(true);
      expect(orgsTeams.serviceAccountName).toBe('platform-orgs-teams');
      const env = containerEnv(manifests, orgsTeams);
      expect(env.KUBERNETES_TOKEN_AUDIENCE).toBe('platform.example.com');
      // What orgs-teams makes of it.
      expect(loadConfig(orgsTeamsApp.env, env).KUBERNETES_TOKEN_AUDIENCE).toBe('platform.example.com');
      const binding = find(manifests, 'ClusterRoleBinding', 'platform-platform-orgs-teams-token-review');
      expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' });
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'platform-orgs-teams', namespace: 'platform' }]);
      expect(ofKind(manifests, 'ClusterRoleBinding')).toHaveLength(1);
      expect(ofKind(manifests, 'Role')).toEqual([]);
      for (const app of APPS.filter((a) => a !== 'orgs-teams')) {
        const pod = find(manifests, 'Deployment', `platform-${app}`).spec.template.spec;
        expect(containerEnv(manifests, pod)).not.toHaveProperty('KUBERNETES_TOKEN_AUDIENCE');
        expect(pod.automountServiceAccountToken).toBe(app === 'clusters');
      }
      // The default audience; and the account's token is mounted even when its values say otherwise.
      const defaults = helmTemplate([...TOKENS, '--set', 'apps.orgs-teams.serviceAccount.automount=false']);
      const pod = find(defaults, 'Deployment', 'platform-orgs-teams').spec.template.spec;
      expect(containerEnv(defaults, pod).KUBERNETES_TOKEN_AUDIENCE).toBe('platformadmin');
      expect(pod.automountServiceAccountToken).toBe(true);
      // An account of the operator's is the one bound.
      const named = helmTemplate([...TOKENS, '--set', 'apps.orgs-teams.serviceAccount.name=identity']);
      expect(find(named, 'ClusterRoleBinding', 'platform-platform-orgs-teams-token-review').subjects[0].name).toBe('identity');
    });

    it('refuse to bind the namespace’s default ServiceAccount, which every other pod there shares', () => {
      expect(() => helmTemplate([...TOKENS, '--set', 'apps.orgs-teams.serviceAccount.create=false'])).toThrow(/system:auth-delegator/);
    });

    it('let orgs-teams, and no other app, reach the Kubernetes API under NetworkPolicies', () => {
      const has6443 = (m: Manifest[], app: string) =>
        find(m, 'NetworkPolicy', `platform-${app}`).spec.egress.some((r: any) => r.ports.some((p: any) => p.port === 6443));
      const manifests = helmTemplate(['-f', PRODUCTION_VALUES, '--set', 'grpc.kubernetesTokens.enabled=true']);
      for (const app of APPS.filter((a) => a !== 'marketplace-listener')) expect(has6443(manifests, app)).toBe(app === 'orgs-teams');
      expect(has6443(helmTemplate(['-f', PRODUCTION_VALUES]), 'orgs-teams')).toBe(false);
    });
  });

  describe('the gRPC front door', () => {
    /** The services with a method that answers service accounts (besides GetVersion, which every service has). */
    const servedToAccounts = METHOD_POLICIES.filter((s) =>
      [...s.byPath].some(([path, p]) => p.access !== 'internal' && !path.endsWith('/GetVersion')),
    ).map((s) => s.service);

    it('is off by default', () => {
      const manifests = helmTemplate(DATABASE);
      expect(ofKind(manifests, 'GRPCRoute')).toEqual([]);
      expect(ofKind(manifests, 'Ingress')).toEqual([]);
    });

    it('routes every service that answers service accounts, and nothing else, to the app that serves it', () => {
      expect(Object.values(PUBLIC_SERVICES).flat().sort()).toEqual([...servedToAccounts].sort());
      for (const [app, services] of Object.entries(PUBLIC_SERVICES)) {
        // An app's services share the package of its own service (GRPC_SERVICES).
        const pkg = GRPC_SERVICES[app as AppName].replace(/\.[^.]+$/, '');
        for (const service of services) expect(service.replace(/\.[^.]+$/, '')).toBe(pkg);
      }
    });

    it('as an Ingress: TLS for its host, gRPC to the backends, one path per public service', () => {
      const manifests = helmTemplate([
        ...DATABASE,
        '--set',
        'grpc.ingress.enabled=true',
        '--set',
        'grpc.ingress.className=nginx',
        '--set',
        'grpc.ingress.host=grpc.example.com',
        '--set',
        'grpc.ingress.tls.secretName=grpc-tls',
        '--set-json',
        'grpc.ingress.annotations={"nginx.ingress.kubernetes.io/proxy-read-timeout":"30"}',
      ]);
      const ingress = find(manifests, 'Ingress', 'platform-grpc');
      expect(ingress.metadata.annotations).toEqual({
        'nginx.ingress.kubernetes.io/backend-protocol': 'GRPC',
        'nginx.ingress.kubernetes.io/proxy-read-timeout': '30',
      });
      expect(ingress.spec.ingressClassName).toBe('nginx');
      expect(ingress.spec.tls).toEqual([{ hosts: ['grpc.example.com'], secretName: 'grpc-tls' }]);
      expect(ingress.spec.rules).toHaveLength(1);
      expect(ingress.spec.rules[0].host).toBe('grpc.example.com');
      expect(ingress.spec.rules[0].http.paths).toEqual(
        Object.entries(PUBLIC_SERVICES).flatMap(([app, services]) =>
          services.map((service) => ({
            path: `/${service}`,
            pathType: 'Prefix',
            backend: { service: { name: `platform-${app}`, port: { name: 'grpc' } } },
          })),
        ),
      );
      // The platform's own Ingress is another matter.
      expect(ofKind(manifests, 'Ingress')).toHaveLength(1);
      expect(() => helmTemplate([...DATABASE, '--set', 'grpc.ingress.enabled=true', '--set', 'grpc.ingress.host='])).toThrow(
        /grpc.ingress.host/,
      );
    });

    it('as a Gateway API GRPCRoute: the public services by name to their apps’ Services, on the Gateway given', () => {
      const parentRefs = [{ name: 'shared', namespace: 'gateway-system', sectionName: 'grpc' }];
      const args = [
        ...DATABASE,
        '--set',
        'grpc.grpcRoute.enabled=true',
        '--set-json',
        `grpc.grpcRoute.parentRefs=${JSON.stringify(parentRefs)}`,
        '--set-json',
        'grpc.grpcRoute.hostnames=["grpc.example.com"]',
      ];
      const route = find(helmTemplate(args), 'GRPCRoute', 'platform-grpc');
      expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1');
      expect(route.metadata.labels).toMatchObject({ 'app.kubernetes.io/instance': 'platform' });
      expect(route.spec).toEqual({
        parentRefs,
        hostnames: ['grpc.example.com'],
        rules: Object.entries(PUBLIC_SERVICES).map(([app, services]) => ({
          matches: services.map((service) => ({ method: { type: 'Exact', service } })),
          backendRefs: [{ name: `platform-${app}`, port: 50051 }],
        })),
      });
      // The Service it names serves gRPC on that port.
      for (const app of PUBLIC_APPS) {
        expect(find(helmTemplate(DATABASE), 'Service', `platform-${app}`).spec.ports).toContainEqual(
          expect.objectContaining({ port: 50051, appProtocol: 'grpc' }),
        );
      }
      // Without an app, its services are not routed.
      const withoutLicensing = find(
        helmTemplate([...args, '--set', 'apps.contracts-licensing.enabled=false']),
        'GRPCRoute',
        'platform-grpc',
      );
      expect(withoutLicensing.spec.rules.map((r: any) => r.backendRefs[0].name)).toEqual(['platform-authz', 'platform-orgs-teams']);
      expect(() => helmTemplate([...DATABASE, '--set', 'grpc.grpcRoute.enabled=true'])).toThrow(/grpc.grpcRoute.parentRefs/);
    });
  });
});

describe('OpenFGA: the setup Job and the store id', () => {
  const OPENFGA = [...DATABASE, '--set', 'openfga.apiUrl=http://openfga.openfga:8080'];
  const hook = (m: Manifest) => m.metadata.annotations?.['helm.sh/hook'];
  const weight = (m: Manifest) => Number(m.metadata.annotations?.['helm.sh/hook-weight']);

  it('finds or creates the store by name in a hook before install and upgrade, before the migrations, and hands authz its id', () => {
    const manifests = helmTemplate(OPENFGA);
    const job = find(manifests, 'Job', 'platform-openfga-setup');
    expect(hook(job)).toBe('pre-install,pre-upgrade');
    expect(weight(job)).toBeLessThan(weight(find(manifests, 'Job', 'platform-migrations')));
    const pod = job.spec.template.spec;
    expect(pod.containers[0].args).toEqual([
      'cli',
      'setup-openfga',
      '--store-name',
      'platform/platform',
      '--configmap',
      'platform-openfga',
    ]);
    expect(pod.containers[0].env).toContainEqual({ name: 'OPENFGA_API_URL', value: 'http://openfga.openfga:8080' });
    expect(pod.containers[0].securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    // Its own account, with rights on that one ConfigMap (create cannot be narrowed by name), made before it.
    expect(pod.serviceAccountName).toBe('platform-openfga-setup');
    expect(pod.automountServiceAccountToken).toBe(true);
    for (const kind of ['ServiceAccount', 'Role', 'RoleBinding']) {
      const made = find(manifests, kind, 'platform-openfga-setup');
      expect(hook(made)).toBe('pre-install,pre-upgrade');
      expect(weight(made)).toBeLessThan(weight(job));
      expect(made.metadata.annotations!['helm.sh/hook-delete-policy']).toBe('before-hook-creation,hook-succeeded');
    }
    expect(find(manifests, 'Role', 'platform-openfga-setup').rules).toEqual([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['platform-openfga'], verbs: ['get', 'update', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    ]);
    // authz cannot start without the id; the other pods take it when it is there (the admin CLI in them).
    for (const app of APPS) {
      const envFrom = find(manifests, 'Deployment', `platform-${app}`).spec.template.spec.containers[0].envFrom;
      expect(envFrom).toEqual([
        { configMapRef: { name: 'platform-config' } },
        { configMapRef: { name: 'platform-openfga', optional: app !== 'authz' } },
      ]);
    }
    const config = find(manifests, 'ConfigMap', 'platform-config').data!;
    expect(config.OPENFGA_API_URL).toBe('http://openfga.openfga:8080');
    expect(config).not.toHaveProperty('OPENFGA_STORE_ID');
    // What authz sees once the Job has written the ConfigMap: a configuration it accepts.
    const written: Manifest = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'platform-openfga' },
      data: { OPENFGA_STORE_ID: '01HZZZZZZZZZZZZZZZZZZZZZZZ' },
    };
    const env = containerEnv([...manifests, written], find(manifests, 'Deployment', 'platform-authz').spec.template.spec);
    expect(() => assertOpenFgaSettings(loadConfig(authzApp.env, env))).not.toThrow();
    expect(env.OPENFGA_STORE_ID).toBe('01HZZZZZZZZZZZZZZZZZZZZZZZ');
  });

  it('gives the Job the token from a hook Secret of its own, or from the Secret that holds it', () => {
    const fromValues = helmTemplate([...OPENFGA, '--set', 'openfga.apiToken=pre-shared']);
    const secret = find(fromValues, 'Secret', 'platform-openfga-setup');
    expect(hook(secret)).toBe('pre-install,pre-upgrade');
    expect(Buffer.from(secret.data!.OPENFGA_API_TOKEN, 'base64').toString()).toBe('pre-shared');
    expect(containerEnv(fromValues, find(fromValues, 'Job', 'platform-openfga-setup').spec.template.spec).OPENFGA_API_TOKEN).toBe(
      'pre-shared',
    );

    const own = helmTemplate([...OPENFGA, '--set', 'openfga.existingSecret=fga', '--set', 'openfga.existingSecretKey=key']);
    expect(own.filter((m) => m.kind === 'Secret' && m.metadata.name === 'platform-openfga-setup')).toEqual([]);
    expect(find(own, 'Job', 'platform-openfga-setup').spec.template.spec.containers[0].env).toContainEqual({
      name: 'OPENFGA_API_TOKEN',
      valueFrom: { secretKeyRef: { name: 'fga', key: 'key', optional: true } },
    });
  });

  it('with a store id given: checks that store and writes the model, without Kubernetes rights or a ConfigMap', () => {
    const manifests = helmTemplate([...OPENFGA, '--set', 'openfga.storeId=01HZZZZZZZZZZZZZZZZZZZZZZZ']);
    const pod = find(manifests, 'Job', 'platform-openfga-setup').spec.template.spec;
    expect(pod.containers[0].args).toEqual(['cli', 'setup-openfga']);
    expect(pod.containers[0].env).toContainEqual({ name: 'OPENFGA_STORE_ID', value: '01HZZZZZZZZZZZZZZZZZZZZZZZ' });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(ofKind(manifests, 'Role')).toEqual([]);
    expect(find(manifests, 'ConfigMap', 'platform-config').data!.OPENFGA_STORE_ID).toBe('01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(find(manifests, 'Deployment', 'platform-authz').spec.template.spec.containers[0].envFrom).toEqual([
      { configMapRef: { name: 'platform-config' } },
    ]);
  });

  it('refuses OpenFGA without a store id when the setup Job is off, and a store id that is not one', () => {
    expect(() => helmTemplate([...OPENFGA, '--set', 'openfga.setup.enabled=false'])).toThrow(/openfga.storeId is required/);
    expect(() => helmTemplate([...OPENFGA, '--set', 'openfga.storeId=not-a-ulid'])).toThrow(/storeId/);
    expect(
      ofKind(
        helmTemplate([...OPENFGA, '--set', 'openfga.setup.enabled=false', '--set', 'openfga.storeId=01HZZZZZZZZZZZZZZZZZZZZZZZ']),
        'Job',
      ).map((j) => j.metadata.name),
    ).toEqual(['platform-migrations']);
  });

  it('lets the Job reach only DNS, OpenFGA and the Kubernetes API under NetworkPolicies, in a policy made before it', () => {
    const manifests = helmTemplate([...OPENFGA, '--set', 'networkPolicy.enabled=true']);
    const policy = find(manifests, 'NetworkPolicy', 'platform-openfga-setup');
    expect(hook(policy)).toBe('pre-install,pre-upgrade');
    expect(policy.spec.podSelector.matchLabels).toEqual(selectorOf('openfga-setup'));
    expect(policy.spec.ingress).toEqual([]);
    expect(policy.spec.egress.flatMap((r: any) => r.ports.map((p: any) => p.port))).toEqual([53, 53, 8080, 8081, 443, 6443]);
  });
});

/** Each secret env variable, the values group whose own Secret may hold it, and an app that reads it. */
const SECRET_GROUPS: { name: string; group: string; single?: boolean; app: AppName }[] = [
  { name: 'DATABASE_URL', group: 'postgres', single: true, app: 'clusters' },
  { name: 'OPENFGA_API_TOKEN', group: 'openfga', single: true, app: 'authz' },
  { name: 'MARKETPLACE_API_SECRET', group: 'marketplace', app: 'marketplace-listener' },
  { name: 'PROVIDERA_ACCESS_KEY_ID', group: 'marketplace', app: 'marketplace-listener' },
  { name: 'PROVIDERA_SECRET_ACCESS_KEY', group: 'marketplace', app: 'marketplace-listener' },
  { name: 'PROVIDERC_SERVICE_ACCOUNT_KEY', group: 'marketplace', app: 'marketplace-listener' },
  { name: 'FLAVORA_TOKEN', group: 'metricsDashboards', app: 'metricsproxy' },
  { name: 'FLAVORB_TOKEN', group: 'metricsDashboards', app: 'metricsproxy' },
  { name: 'PLATFORM_ADMIN_PASSWORD', group: 'platformAdmin', single: true, app: 'orgs-teams' },
  { name: 'SECRETS_ENCRYPTION_KEY', group: 'secretsEncryption', single: true, app: 'contracts-licensing' },
  { name: 'LICENSE_CA_CERT', group: 'licenseCA', app: 'contracts-licensing' },
  { name: 'LICENSE_CA_KEY', group: 'licenseCA', app: 'contracts-licensing' },
  { name: 'SMTP_URL', group: 'notifications', app: 'contracts-licensing' },
  { name: 'OBJECT_STORAGE_ACCESS_KEY_ID', group: 'objectStorage', app: 'orgs-teams' },
  { name: 'OBJECT_STORAGE_SECRET_ACCESS_KEY', group: 'objectStorage', app: 'gateway' },
  { name: 'OBJECT_STORAGE_SIGNING_KEY', group: 'objectStorage', app: 'marketplace-listener' },
];

describe('secrets from Secrets of your own, and GitOps', () => {
  const OPENFGA = ['--set', 'openfga.apiUrl=http://openfga:8080'];

  it('covers every secret value of values.yaml', () => {
    const secret = find(helmTemplate([...DATABASE, ...OPENFGA]), 'Secret', 'platform-secrets');
    const notSecret = ['PLATFORM_ADMIN_USERNAME', 'PLATFORM_ADMIN_EMAIL'];
    expect(SECRET_GROUPS.map((g) => g.name).sort()).toEqual(
      Object.keys(secret.data!)
        .filter((k) => !notSecret.includes(k))
        .sort(),
    );
  });

  it.each(SECRET_GROUPS)(
    '$name: from $group.existingSecret under a key of its choosing, and no longer in the chart’s Secret',
    ({ name, group, single, app }) => {
      const key = `the-${name.toLowerCase()}`;
      const keyValue = single ? ['--set', `${group}.existingSecretKey=${key}`] : ['--set', `${group}.existingSecretKeys.${name}=${key}`];
      const manifests = helmTemplate([
        ...OPENFGA,
        ...(name === 'DATABASE_URL' ? [] : DATABASE),
        '--set',
        `${group}.existingSecret=own-${group}`,
        ...keyValue,
      ]);
      const env = find(manifests, 'Deployment', `platform-${app}`).spec.template.spec.containers[0].env;
      const entry = env.find((e: any) => e.name === name);
      expect(entry.valueFrom.secretKeyRef).toMatchObject({ name: `own-${group}`, key });
      expect(find(manifests, 'Secret', 'platform-secrets').data).not.toHaveProperty(name);
      // Without a key of its own, the variable's name.
      const plain = helmTemplate([...OPENFGA, ...DATABASE, '--set', `${group}.existingSecret=own-${group}`]);
      const plainEntry = find(plain, 'Deployment', `platform-${app}`).spec.template.spec.containers[0].env.find(
        (e: any) => e.name === name,
      );
      expect(plainEntry.valueFrom.secretKeyRef).toMatchObject({ name: `own-${group}`, key: name });
    },
  );

  it('renders the same manifests twice when every secret is given or comes from a Secret: nothing is generated', () => {
    const explicit = [
      ...DATABASE,
      '--set',
      'platformAdmin.password=admin-password',
      '--set',
      `secretsEncryptionKey=${Buffer.alloc(32, 7).toString('base64')}`,
      '--set',
      'objectStorage.signingKey=0123456789abcdef0123456789abcdef',
      '--set-json',
      `appKeys.keys=${JSON.stringify([KEY_A])}`,
    ];
    expect(helmTemplateText(explicit)).toBe(helmTemplateText(explicit));
    const own = ['--set', 'existingSecret=platform-secrets-gitops', '--set', 'appKeys.existingSecret=platform-app-keys-gitops'];
    const rendered = helmTemplateText(own);
    expect(helmTemplateText(own)).toBe(rendered);
    expect(rendered).not.toMatch(/^kind: Secret$/m);
    // existingSecret alone covers the app keys as well.
    const shared = ['--set', 'existingSecret=platform-secrets-gitops'];
    const sharedRender = helmTemplateText(shared);
    expect(helmTemplateText(shared)).toBe(sharedRender);
    expect(sharedRender).not.toMatch(/^kind: Secret$/m);
    // Per group as well: the generated ones each from a Secret of their own.
    const groups = [
      ...DATABASE,
      '--set',
      'platformAdmin.existingSecret=admin',
      '--set',
      'secretsEncryption.existingSecret=sealing',
      '--set',
      'objectStorage.existingSecret=objects',
      '--set',
      'appKeys.existingSecret=app-keys',
    ];
    expect(helmTemplateText(groups)).toBe(helmTemplateText(groups));
    // What GitOps must avoid: left to the chart, every render (no cluster to keep them from) makes new keys. Two
    // renders of their own (helmTemplate answers a file's repeated values from its first render).
    const render = () => parseManifests(helmTemplateText(DATABASE));
    const key = (m: Manifest[]) => find(m, 'Secret', 'platform-secrets').data!.SECRETS_ENCRYPTION_KEY;
    expect(key(render())).not.toBe(key(render()));
    const appKeys = (m: Manifest[]) => find(m, 'Secret', 'platform-app-keys').data!.PLATFORM_APP_KEYS;
    expect(appKeys(render())).not.toBe(appKeys(render()));
  });

  describe('over an existing release (lookup, against a stand-in for the Kubernetes API)', () => {
    const OLD_KEY = Buffer.alloc(32, 1).toString('base64');
    const NEW_KEY = Buffer.alloc(32, 2).toString('base64');
    let server: http.Server;
    let kubeconfig: string;
    const secrets = new Map<string, Record<string, string>>();

    beforeAll(async () => {
      server = http.createServer((req, res) => fakeKubernetesApi(req, res, secrets));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chart-kubeconfig-'));
      kubeconfig = path.join(dir, 'config');
      fs.writeFileSync(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          `clusters: [{name: fake, cluster: {server: "http://127.0.0.1:${(server.address() as AddressInfo).port}"}}]`,
          'users: [{name: fake, user: {token: fake}}]',
          'contexts: [{name: fake, context: {cluster: fake, user: fake}}]',
          'current-context: fake',
        ].join('\n'),
        { mode: 0o600 },
      );
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(path.dirname(kubeconfig), { recursive: true, force: true });
    });
    beforeEach(() => {
      secrets.clear();
      secrets.set('platform-secrets', { SECRETS_ENCRYPTION_KEY: b64(OLD_KEY), PLATFORM_ADMIN_PASSWORD: b64('kept-password') });
    });

    const render = (args: string[]) =>
      helmTemplateAsync([...DATABASE, '--kubeconfig', kubeconfig, '--dry-run=server', '--disable-openapi-validation', ...args]);
    const rendered = (stdout: string, key: string) =>
      Buffer.from(find(parseManifests(stdout), 'Secret', 'platform-secrets').data![key], 'base64').toString();

    it('keeps the release’s key and password when the values leave them empty', async () => {
      const res = await render([]);
      expect(res.stderr).toBe('');
      expect(rendered(res.stdout, 'SECRETS_ENCRYPTION_KEY')).toBe(OLD_KEY);
      expect(rendered(res.stdout, 'PLATFORM_ADMIN_PASSWORD')).toBe('kept-password');
    });

    it('refuses a secretsEncryptionKey that differs from the release’s, and takes the same one', async () => {
      const changed = await render(['--set', `secretsEncryptionKey=${NEW_KEY}`]);
      expect(changed.code).not.toBe(0);
      expect(changed.stderr).toMatch(
        /SECRETS_ENCRYPTION_KEY from secretsEncryptionKey differs from the one the release's Secret platform-secrets holds/,
      );
      expect(changed.stderr).not.toContain(OLD_KEY);
      const same = await render(['--set', `secretsEncryptionKey=${OLD_KEY}`]);
      expect(same.code).toBe(0);
    });

    it('refuses a Secret of your own whose key differs from the release’s', async () => {
      secrets.set('sealing', { SECRETS_ENCRYPTION_KEY: b64(NEW_KEY) });
      const changed = await render(['--set', 'secretsEncryption.existingSecret=sealing']);
      expect(changed.code).not.toBe(0);
      expect(changed.stderr).toMatch(/SECRETS_ENCRYPTION_KEY from the Secret sealing, key SECRETS_ENCRYPTION_KEY differs/);
      secrets.set('sealing', { SECRETS_ENCRYPTION_KEY: b64(OLD_KEY) });
      expect((await render(['--set', 'secretsEncryption.existingSecret=sealing'])).code).toBe(0);
      // A Secret not created yet cannot be compared: the render goes on (the pods wait for it).
      expect((await render(['--set', 'existingSecret=not-yet'])).code).toBe(0);
    });

    it('keeps the release’s app keys, also keys put into their Secret by hand, and rolls every app when they change', async () => {
      const appKeysOf = (stdout: string) =>
        Buffer.from(find(parseManifests(stdout), 'Secret', 'platform-app-keys').data!.PLATFORM_APP_KEYS, 'base64').toString();
      const checksums = (stdout: string) =>
        new Set(ofKind(parseManifests(stdout), 'Deployment').map((d) => d.spec.template.metadata.annotations['checksum/app-keys']));
      // Installed: one new key, and every app's checksum is of the key the Secret holds, so that the first upgrade
      // (which looks that key up) rolls nothing.
      const installed = await render([]);
      expect(installed.code).toBe(0);
      expect(checksums(installed.stdout)).toEqual(new Set([sha256(appKeysOf(installed.stdout))]));
      // Upgraded: the Secret's keys stay, as put there (a rotation step done by editing the Secret).
      secrets.set('platform-app-keys', { PLATFORM_APP_KEYS: b64(`${KEY_A},${KEY_B}`) });
      const upgraded = await render([]);
      expect(upgraded.stderr).toBe('');
      expect(appKeysOf(upgraded.stdout)).toBe(`${KEY_A},${KEY_B}`);
      expect(checksums(upgraded.stdout)).toEqual(new Set([sha256(`${KEY_A},${KEY_B}`)]));
      // The next step (the new key first) is a rollout of every app.
      secrets.set('platform-app-keys', { PLATFORM_APP_KEYS: b64(`${KEY_B},${KEY_A}`) });
      const swapped = await render([]);
      expect(appKeysOf(swapped.stdout)).toBe(`${KEY_B},${KEY_A}`);
      expect(checksums(swapped.stdout)).toEqual(new Set([sha256(`${KEY_B},${KEY_A}`)]));
      // Keys given as values win over the Secret's.
      expect(appKeysOf((await render(['--set-json', `appKeys.keys=${JSON.stringify([KEY_A])}`])).stdout)).toBe(KEY_A);
    });

    it('rolls every app when the keys of a Secret of your own change', async () => {
      const args = ['--set', 'appKeys.existingSecret=own-keys'];
      const checksums = (stdout: string) =>
        new Set(ofKind(parseManifests(stdout), 'Deployment').map((d) => d.spec.template.metadata.annotations['checksum/app-keys']));
      secrets.set('own-keys', { PLATFORM_APP_KEYS: b64(KEY_A) });
      const before = await render(args);
      expect(before.code).toBe(0);
      expect(parseManifests(before.stdout).filter((m) => m.metadata.name === 'platform-app-keys')).toEqual([]);
      secrets.set('own-keys', { PLATFORM_APP_KEYS: b64(`${KEY_A},${KEY_B}`) });
      const after = await render(args);
      expect(checksums(before.stdout).size).toBe(1);
      expect(checksums(after.stdout).size).toBe(1);
      expect([...checksums(after.stdout)]).not.toEqual([...checksums(before.stdout)]);
    });

    it('with existingSecret, rolls every app when its PLATFORM_APP_KEYS change, and refuses that Secret without them', async () => {
      const args = ['--set', 'existingSecret=own-secrets'];
      const checksums = (stdout: string) =>
        new Set(ofKind(parseManifests(stdout), 'Deployment').map((d) => d.spec.template.metadata.annotations['checksum/app-keys']));
      secrets.set('own-secrets', { DATABASE_URL: b64('postgres://platform@postgres/platform'), PLATFORM_APP_KEYS: b64(KEY_A) });
      const before = await render(args);
      expect(before.stderr).toBe('');
      expect(ofKind(parseManifests(before.stdout), 'Secret')).toEqual([]);
      secrets.set('own-secrets', {
        DATABASE_URL: b64('postgres://platform@postgres/platform'),
        PLATFORM_APP_KEYS: b64(`${KEY_A},${KEY_B}`),
      });
      const after = await render(args);
      expect(checksums(before.stdout).size).toBe(1);
      expect(checksums(after.stdout).size).toBe(1);
      expect([...checksums(after.stdout)]).not.toEqual([...checksums(before.stdout)]);
      // Without the keys no app would start (a missing key of a secretKeyRef): refused, saying how to carry the
      // release's keys over, and without showing them.
      secrets.set('own-secrets', { DATABASE_URL: b64('postgres://platform@postgres/platform') });
      secrets.set('platform-app-keys', { PLATFORM_APP_KEYS: b64(KEY_A) });
      const missing = await render(args);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/the Secret own-secrets \(existingSecret\) has no key PLATFORM_APP_KEYS/);
      expect(missing.stderr).toContain('platform-app-keys');
      expect(missing.stderr).not.toContain(KEY_A);
      // With the keys named elsewhere, that Secret need not hold them.
      expect((await render([...args, '--set', 'appKeys.existingSecret=own-keys'])).code).toBe(0);
    });
  });
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The discovery documents helm reads before it renders with a cluster, and the namespace's Secrets for `lookup`. */
function fakeKubernetesApi(req: http.IncomingMessage, res: http.ServerResponse, secrets: Map<string, Record<string, string>>): void {
  const kinds: Record<string, [string, string][]> = {
    v1: [
      ['secrets', 'Secret'],
      ['configmaps', 'ConfigMap'],
      ['services', 'Service'],
      ['serviceaccounts', 'ServiceAccount'],
      ['pods', 'Pod'],
    ],
    'apps/v1': [['deployments', 'Deployment']],
    'batch/v1': [['jobs', 'Job']],
    'policy/v1': [['poddisruptionbudgets', 'PodDisruptionBudget']],
    'networking.k8s.io/v1': [
      ['networkpolicies', 'NetworkPolicy'],
      ['ingresses', 'Ingress'],
    ],
    'rbac.authorization.k8s.io/v1': [
      ['roles', 'Role'],
      ['rolebindings', 'RoleBinding'],
    ],
    'autoscaling/v2': [['horizontalpodautoscalers', 'HorizontalPodAutoscaler']],
    'monitoring.coreos.com/v1': [
      ['servicemonitors', 'ServiceMonitor'],
      ['prometheusrules', 'PrometheusRule'],
    ],
  };
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const url = new URL(req.url!, 'http://x').pathname;
  const resources = (gv: string) => ({
    kind: 'APIResourceList',
    groupVersion: gv,
    resources: kinds[gv].map(([name, kind]) => ({
      name,
      singularName: kind.toLowerCase(),
      namespaced: true,
      kind,
      verbs: ['get', 'list'],
    })),
  });
  if (url === '/version') return send(200, { major: '1', minor: '30', gitVersion: 'v1.30.0', platform: 'linux/amd64' });
  if (url === '/api') return send(200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
  if (url === '/api/v1') return send(200, resources('v1'));
  if (url === '/apis') {
    const groups = Object.keys(kinds)
      .filter((gv) => gv.includes('/'))
      .map((gv) => {
        const [name, version] = gv.split('/');
        return { name, versions: [{ groupVersion: gv, version }], preferredVersion: { groupVersion: gv, version } };
      });
    return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups });
  }
  const group = /^\/apis\/(.+\/v\w+)$/.exec(url);
  if (group && kinds[group[1]]) return send(200, resources(group[1]));
  const secret = /^\/api\/v1\/namespaces\/platform\/secrets\/([^/]+)$/.exec(url);
  if (secret && secrets.has(secret[1])) {
    // The release's own Secrets carry Helm's ownership marks (helm refuses to take over one without them).
    const owned = ['platform-secrets', 'platform-app-keys'].includes(secret[1]);
    const metadata = {
      name: secret[1],
      namespace: 'platform',
      ...(owned && {
        labels: { 'app.kubernetes.io/managed-by': 'Helm' },
        annotations: { 'meta.helm.sh/release-name': 'platform', 'meta.helm.sh/release-namespace': 'platform' },
      }),
    };
    return send(200, { apiVersion: 'v1', kind: 'Secret', metadata, data: secrets.get(secret[1]) });
  }
  send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${url} not found` });
}

describe('helm test', () => {
  const pod = () => find(helmTemplate(DATABASE), 'Pod', 'platform-test');

  it('is a test hook Pod from the image, as locked down as the apps, aimed at the gateway’s Service', () => {
    const test = pod();
    expect(test.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'test' });
    expect(test.spec.restartPolicy).toBe('Never');
    expect(test.spec.automountServiceAccountToken).toBe(false);
    const c = test.spec.containers[0];
    expect(c.image).toBe('platform:0.1.0');
    expect(c.env).toEqual([{ name: 'GATEWAY_URL', value: 'http://platform-gateway:8080' }]);
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    expect(ofKind(helmTemplate([...DATABASE, '--set', 'tests.enabled=false']), 'Pod')).toEqual([]);
  });

  it('passes when /readyz and /api/v1/version answer 200, and fails when either does not', async () => {
    const c = pod().spec.containers[0];
    let readyz = 200;
    const asked: string[] = [];
    const gateway = http.createServer((req, res) => {
      asked.push(req.url!);
      const status = req.url === '/readyz' ? readyz : req.url === '/api/v1/version' ? 200 : 404;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status }));
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
    // The container's command, as the kubelet runs it, with this machine's node.
    const runTest = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [...c.command.slice(1), ...c.args], { env: { GATEWAY_URL: url } });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d));
        child.once('close', (code: number | null) => resolve({ code, out }));
      });
    try {
      expect(c.command[0]).toBe('node');
      const ok = await runTest();
      expect(ok.code).toBe(0);
      expect(asked).toEqual(['/readyz', '/api/v1/version']);
      readyz = 503;
      const notReady = await runTest();
      expect(notReady.code).toBe(1);
      expect(notReady.out).toContain('503 GET /readyz');
    } finally {
      await new Promise((resolve) => gateway.close(resolve));
    }
  });

  it('is let through to the gateway when NetworkPolicies admit HTTP only from the ingress controller', () => {
    const manifests = helmTemplate(['-f', PRODUCTION_VALUES]);
    const http = find(manifests, 'NetworkPolicy', 'platform-gateway').spec.ingress.filter((r: any) =>
      r.ports.some((p: any) => p.port === 'http'),
    );
    expect(http).toContainEqual({
      from: [{ podSelector: { matchLabels: selectorOf('test') } }],
      ports: [{ port: 'http', protocol: 'TCP' }],
    });
  });
});

/** Every metric name the platform's code registers (telemetry Counter, Gauge and Histogram, by their first argument). */
function registeredMetrics(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(file);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        for (const m of fs.readFileSync(file, 'utf8').matchAll(/new (?:Counter|Gauge|Histogram)\(\s*'([a-z_]+)'/g)) names.add(m[1]);
      }
    }
  };
  for (const top of ['apps', 'libs']) walk(path.join(ROOT, top));
  return names;
}

/** The platform's metrics a PromQL expression uses (those of kube-state-metrics, Prometheus and prom-client aside). */
function platformMetricsIn(expr: string): string[] {
  const external = /^(up|kube_.*|process_.*|nodejs_.*)$/;
  const words = [...expr.matchAll(/\b([a-z_]+)\{/g)].map((m) => m[1].replace(/_(bucket|sum|count)$/, ''));
  return words.filter((w) => !external.test(w));
}

describe('alerts and the dashboard', () => {
  const MONITORING = [...DATABASE, '--set', 'metrics.prometheusRule.enabled=true', '--set', 'metrics.grafanaDashboard.enabled=true'];

  it('renders neither unless asked', () => {
    const manifests = helmTemplate(DATABASE);
    expect(ofKind(manifests, 'PrometheusRule')).toEqual([]);
    expect(manifests.filter((m) => m.metadata.labels?.grafana_dashboard)).toEqual([]);
  });

  it('alerts on pods down or not ready, the 5xx share and refused reports, with metrics the apps register', () => {
    const manifests = helmTemplate([
      ...MONITORING,
      '--set-json',
      'metrics.prometheusRule.labels={"release":"prometheus"}',
      '--set-json',
      'metrics.prometheusRule.http5xxRatio=0.1',
    ]);
    const rule = find(manifests, 'PrometheusRule', 'platform');
    expect(rule.metadata.labels).toMatchObject({ release: 'prometheus' });
    const rules = rule.spec.groups.flatMap((g: any) => g.rules);
    expect(rules.map((r: any) => r.alert)).toEqual([
      'PlatformTargetDown',
      'PlatformPodsNotReady',
      'PlatformHttp5xxRate',
      'PlatformIngestionRefusals',
      'PlatformBillingReportsRefused',
      'PlatformBusRedeliveries',
      'PlatformLicensesExpiring',
    ]);
    expect(rules.find((r: any) => r.alert === 'PlatformHttp5xxRate').expr).toMatch(/> 0\.1\s*$/);
    const known = registeredMetrics();
    const used = rules.flatMap((r: any) => platformMetricsIn(r.expr));
    expect(used.length).toBeGreaterThan(0);
    for (const name of used) expect([name, known.has(name)]).toEqual([name, true]);
    // Every expression is limited to this release's series.
    for (const r of rules) expect(r.expr).toContain('namespace="platform"');
  });

  it('ships a Grafana dashboard for the sidecar, on metrics the apps register', () => {
    const manifests = helmTemplate([...MONITORING, '--set', 'metrics.grafanaDashboard.namespace=monitoring']);
    const cm = find(manifests, 'ConfigMap', 'platform-dashboard');
    expect(cm.metadata.namespace).toBe('monitoring');
    expect(cm.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    const dashboard = JSON.parse(cm.data!['platform.json']);
    expect(dashboard.uid).toBe('platform-overview');
    expect(dashboard.templating.list.find((v: any) => v.name === 'release').query).toBe('platform');
    const known = registeredMetrics();
    const used = dashboard.panels.flatMap((p: any) => p.targets.flatMap((t: any) => platformMetricsIn(t.expr)));
    expect(used.length).toBeGreaterThan(5);
    for (const name of used) expect([name, known.has(name)]).toEqual([name, true]);
  });
});

describe('scheduling and additions per app', () => {
  const ZONES = { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' };

  it('spreads every app’s pods, each constraint over the app’s own pods unless it names others; an app may replace the list', () => {
    const own = {
      maxSkew: 2,
      topologyKey: 'kubernetes.io/hostname',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { tier: 'x' } },
    };
    const manifests = helmTemplate([
      ...DATABASE,
      '--set-json',
      `topologySpreadConstraints=${JSON.stringify([ZONES])}`,
      '--set-json',
      `apps.authz.topologySpreadConstraints=${JSON.stringify([own])}`,
    ]);
    for (const app of APPS.filter((a) => a !== 'authz')) {
      expect(find(manifests, 'Deployment', `platform-${app}`).spec.template.spec.topologySpreadConstraints).toEqual([
        { ...ZONES, labelSelector: { matchLabels: selectorOf(app) } },
      ]);
    }
    expect(find(manifests, 'Deployment', 'platform-authz').spec.template.spec.topologySpreadConstraints).toEqual([own]);
    expect(find(helmTemplate(DATABASE), 'Deployment', 'platform-gateway').spec.template.spec).not.toHaveProperty(
      'topologySpreadConstraints',
    );
  });

  it('adds the global extra env, volumes and mounts to every app, then the app’s own', () => {
    const globalEnv = [{ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/ca/ca.crt' }];
    const authzEnv = [{ name: 'FROM_FIELD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }];
    const manifests = helmTemplate([
      ...DATABASE,
      '--set-json',
      `extraEnv=${JSON.stringify(globalEnv)}`,
      '--set-json',
      'extraVolumes=[{"name":"ca","configMap":{"name":"corporate-ca"}}]',
      '--set-json',
      'extraVolumeMounts=[{"name":"ca","mountPath":"/etc/ca","readOnly":true}]',
      '--set-json',
      `apps.authz.extraEnv=${JSON.stringify(authzEnv)}`,
      '--set-json',
      'apps.authz.extraVolumes=[{"name":"extra","emptyDir":{}}]',
      '--set-json',
      'apps.authz.extraVolumeMounts=[{"name":"extra","mountPath":"/extra"}]',
    ]);
    for (const app of APPS) {
      const pod = find(manifests, 'Deployment', `platform-${app}`).spec.template.spec;
      const c = pod.containers[0];
      const extraEnv = c.env.filter((e: any) => ['NODE_EXTRA_CA_CERTS', 'FROM_FIELD'].includes(e.name));
      expect(extraEnv).toEqual(app === 'authz' ? [...globalEnv, ...authzEnv] : globalEnv);
      expect(c.volumeMounts.slice(1)).toEqual([
        { name: 'ca', mountPath: '/etc/ca', readOnly: true },
        ...(app === 'authz' ? [{ name: 'extra', mountPath: '/extra' }] : []),
      ]);
      expect(pod.volumes.slice(1)).toEqual([
        { name: 'ca', configMap: { name: 'corporate-ca' } },
        ...(app === 'authz' ? [{ name: 'extra', emptyDir: {} }] : []),
      ]);
    }
    expect(containerEnv(manifests, find(manifests, 'Deployment', 'platform-gateway').spec.template.spec).NODE_EXTRA_CA_CERTS).toBe(
      '/etc/ca/ca.crt',
    );
    expect(() => helmTemplate([...DATABASE, '--set-json', 'extraEnv=[{"value":"no name"}]'])).toThrow(/name/);
  });
});

describe('scheduled backups (backup.enabled)', () => {
  const RECIPIENT = 'age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p';
  const ON = [...DATABASE, '--set', 'backup.enabled=true'];
  const TO_VOLUME = [
    ...ON,
    '--set',
    'backup.destination.pvc.claimName=platform-backups',
    '--set-json',
    `backup.recipients=["${RECIPIENT}"]`,
  ];
  const TO_BUCKET = [
    ...ON,
    '--set',
    'backup.destination.type=s3',
    '--set',
    'backup.destination.s3.endpoint=https://minio.storage:9000',
    '--set',
    'backup.destination.s3.bucket=platform-backups',
    '--set',
    'backup.destination.s3.prefix=/nightly/',
    '--set',
    'backup.destination.s3.existingSecret=backup-bucket',
    '--set',
    'backup.passphrase.existingSecret=backup-passphrase',
    '--set',
    'backup.retention.keep=14',
    '--set',
    'backup.retention.keepDays=30',
  ];
  const cronJob = (manifests: Manifest[]) => find(manifests, 'CronJob', 'platform-backup');
  const podOf = (job: Manifest) => job.spec.jobTemplate.spec.template.spec;

  it('is absent unless enabled', () => {
    const manifests = helmTemplate([...DATABASE, '--set', 'networkPolicy.enabled=true']);
    expect(ofKind(manifests, 'CronJob')).toEqual([]);
    expect(manifests.filter((m) => m.metadata.name === 'platform-backup')).toEqual([]);
  });

  it('refuses an unencrypted job, both keys at once, and a destination without its volume or bucket', () => {
    expect(() => helmTemplate([...ON, '--set', 'backup.destination.pvc.claimName=v'])).toThrow(
      /backup.recipients .* or backup.passphrase.existingSecret is required/,
    );
    expect(() => helmTemplate([...TO_VOLUME, '--set', 'backup.passphrase.existingSecret=p'])).toThrow(
      /give backup.recipients or backup.passphrase.existingSecret, not both/,
    );
    expect(() => helmTemplate([...ON, '--set-json', `backup.recipients=["${RECIPIENT}"]`])).toThrow(
      /backup.destination.pvc.claimName is required/,
    );
    expect(() => helmTemplate([...TO_BUCKET, '--set', 'backup.destination.s3.bucket='])).toThrow(
      /backup.destination.s3.bucket is required/,
    );
    expect(() => helmTemplate([...TO_VOLUME, '--set-json', 'backup.recipients=["not-a-key"]'])).toThrow(/recipients/);
  });

  it('into a volume: runs the CLI nightly against DATABASE_URL with the apps’ key material, to the claim, encrypted to the recipients', () => {
    const manifests = helmTemplate(TO_VOLUME);
    const job = cronJob(manifests);
    expect(job.spec).toMatchObject({ schedule: '0 3 * * *', concurrencyPolicy: 'Forbid' });
    const pod = podOf(job);
    expect(pod).toMatchObject({ restartPolicy: 'Never', automountServiceAccountToken: false, securityContext: { runAsNonRoot: true } });
    const c = pod.containers[0];
    expect(c.image).toBe('platform:0.1.0');
    expect(c.args).toEqual(['cli', 'backup', '--to', '/backups', '--keep', '7', '--recipient', RECIPIENT]);
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true });
    expect(c.volumeMounts).toContainEqual({ name: 'backups', mountPath: '/backups' });
    expect(pod.volumes).toContainEqual({ name: 'backups', persistentVolumeClaim: { claimName: 'platform-backups' } });
    // The same values the apps get: the archive must hold the CA's seal and the signing key.
    const env = containerEnv(manifests, pod);
    const contracts = containerEnv(manifests, find(manifests, 'Deployment', 'platform-contracts-licensing').spec.template.spec);
    expect(env.DATABASE_URL).toBe('postgres://platform:pw@postgres:5432/platform');
    expect(env.SECRETS_ENCRYPTION_KEY).toBe(contracts.SECRETS_ENCRYPTION_KEY);
    expect(env.OBJECT_STORAGE_SIGNING_KEY).toBeDefined();
    expect(env).not.toHaveProperty('BACKUP_PASSPHRASE');
    expect(env).not.toHaveProperty('PLATFORM_ADMIN_PASSWORD');
    expect(Object.keys(env).filter((k) => k.startsWith('BACKUP_S3_'))).toEqual([]);
  });

  it('into a bucket: uploads under the prefix with the bucket’s own credentials and a passphrase from Secrets, retention by count and age', () => {
    const manifests = helmTemplate(TO_BUCKET);
    const pod = podOf(cronJob(manifests));
    const c = pod.containers[0];
    expect(c.args).toEqual(['cli', 'backup', '--to', 's3://platform-backups/nightly', '--keep', '14', '--keep-days', '30']);
    const ref = (name: string) => c.env.find((e: any) => e.name === name)?.valueFrom?.secretKeyRef;
    expect(ref('BACKUP_PASSPHRASE')).toEqual({ name: 'backup-passphrase', key: 'BACKUP_PASSPHRASE' });
    expect(ref('BACKUP_S3_ACCESS_KEY_ID')).toEqual({ name: 'backup-bucket', key: 'BACKUP_S3_ACCESS_KEY_ID' });
    expect(ref('BACKUP_S3_SECRET_ACCESS_KEY')).toEqual({ name: 'backup-bucket', key: 'BACKUP_S3_SECRET_ACCESS_KEY' });
    const value = (name: string) => c.env.find((e: any) => e.name === name)?.value;
    expect([value('BACKUP_S3_ENDPOINT'), value('BACKUP_S3_REGION'), value('BACKUP_S3_FORCE_PATH_STYLE')]).toEqual([
      'https://minio.storage:9000',
      'us-east-1',
      'true',
    ]);
    // The archive is made in a scratch volume of its own before the upload, not in the small /tmp.
    expect(value('TMPDIR')).toBe('/scratch');
    expect(pod.volumes).toContainEqual({ name: 'scratch', emptyDir: { sizeLimit: '4Gi' } });
    expect(pod.volumes.find((v: any) => v.persistentVolumeClaim)).toBeUndefined();
    // Under NetworkPolicies: DNS, the database and the bucket; nothing reaches it.
    const policy = find(helmTemplate([...TO_BUCKET, '--set', 'networkPolicy.enabled=true']), 'NetworkPolicy', 'platform-backup');
    expect(policy.spec.podSelector.matchLabels).toEqual(selectorOf('backup'));
    expect(policy.spec.ingress).toEqual([]);
    expect(policy.spec.egress.flatMap((r: any) => r.ports.map((p: any) => p.port))).toEqual([53, 53, 5432, 443]);
  });

  it.each([
    ['a volume', TO_VOLUME],
    ['a bucket', [...TO_BUCKET, '--set', 'networkPolicy.enabled=true', '--set', 'backup.timeZone=Europe/Berlin']],
  ])('into %s: every object is valid for its kind', (_, args) => {
    const results = validateAgainstKubernetes(helmTemplate(args)).filter((r) => r.name === 'platform-backup');
    expect(results.length).toBeGreaterThan(0);
    expect(results.filter((r) => r.errors !== '')).toEqual([]);
  });
});

describe('the rendered objects against the Kubernetes API schemas', () => {
  const TRIAL_VALUES = path.join(CHART, 'values-trial.yaml');
  const everything = [
    ...DATABASE,
    '--set',
    'openfga.apiUrl=http://openfga:8080',
    '--set',
    'openfga.apiToken=t',
    '--set',
    'networkPolicy.enabled=true',
    '--set',
    'metrics.serviceMonitor.enabled=true',
    '--set',
    'metrics.prometheusRule.enabled=true',
    '--set',
    'metrics.grafanaDashboard.enabled=true',
    '--set',
    'ingress.enabled=true',
    '--set',
    'apps.gateway.autoscaling.enabled=true',
    '--set-json',
    'apps.clusters.rbac.rules=[{"apiGroups":[""],"resources":["namespaces"],"verbs":["get"]}]',
    '--set-json',
    'topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway"}]',
    '--set-json',
    'extraVolumes=[{"name":"ca","configMap":{"name":"corporate-ca"}}]',
    '--set-json',
    'extraVolumeMounts=[{"name":"ca","mountPath":"/etc/ca"}]',
    '--set-json',
    'grpc.clientNamespaces=["team-a"]',
    '--set-json',
    'grpc.clientPodSelector={"matchLabels":{"platform-client":"true"}}',
    '--set',
    'grpc.kubernetesTokens.enabled=true',
    '--set',
    'grpc.ingress.enabled=true',
  ];

  it.each([
    ['the default values', DATABASE],
    ['values-production.yaml', ['-f', PRODUCTION_VALUES]],
    ['values-trial.yaml', ['-f', TRIAL_VALUES]],
    ['every optional object enabled', everything],
  ])('%s: every object is valid for its kind', (_, args) => {
    const results = validateAgainstKubernetes(helmTemplate(args));
    expect(results.filter((r) => r.errors === undefined)).toEqual([]);
    expect(results.filter((r) => r.errors)).toEqual([]);
    expect(results.length).toBeGreaterThan(20);
  });

  it('would catch an invalid object', () => {
    const deployment = find(helmTemplate(DATABASE), 'Deployment', 'platform-authz');
    deployment.spec.template.spec.containers[0].ports[0].containerPort = 'grpc';
    const [result] = validateAgainstKubernetes([deployment]);
    expect(result.errors).toMatch(/containerPort must be integer/);
  });
});
