{{/*
Chart name.
*/}}
{{- define "platform.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified release name. Truncated to leave room for the "-<app>" suffix
(the longest, "-contracts-licensing", is 20 characters) within 63.
*/}}
{{- define "platform.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 43 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 43 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 43 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart label value.
*/}}
{{- define "platform.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Name of one app's Deployment and Service: <fullname>-<app>.
Context: dict "root" $ "app" "<app>"
*/}}
{{- define "platform.appFullname" -}}
{{- printf "%s-%s" (include "platform.fullname" .root) .app | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels. Context: dict "root" $ [ "app" "<app>" ]
With an app, app.kubernetes.io/component is that app.
*/}}
{{- define "platform.labels" -}}
helm.sh/chart: {{ include "platform.chart" .root }}
{{ include "platform.selectorLabels" . }}
app.kubernetes.io/part-of: platform
{{- with .root.Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{/*
Selector labels. Context: dict "root" $ [ "app" "<app>" ]
*/}}
{{- define "platform.selectorLabels" -}}
app.kubernetes.io/name: {{ include "platform.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .app }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{/*
ConfigMap holding the env common to every app.
*/}}
{{- define "platform.configMapName" -}}
{{- printf "%s-config" (include "platform.fullname" .) }}
{{- end }}

{{/*
Secret holding the secret env: the user's existingSecret, or the chart's.
*/}}
{{- define "platform.secretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else }}
{{- printf "%s-secrets" (include "platform.fullname" .) }}
{{- end }}
{{- end }}

{{/*
gRPC port every app serves on (grpc.health.v1 and reflection included).
*/}}
{{- define "platform.grpcPort" -}}
50051
{{- end }}

{{/*
The gRPC service an app's readiness probe asks grpc.health.v1 about. Context: the app name.
It reports NOT_SERVING while the app cannot serve (an app that uses the message
bus, while its NATS connection is lost) and during shutdown; "" (the whole
server, asked by the startup and liveness probes) stays SERVING while the
process runs.
*/}}
{{- define "platform.grpcService" -}}
{{- $services := dict }}
{{- $_ := set $services "gateway" "platformadmin.gateway.v1.GatewayService" }}
{{- $_ := set $services "authz" "platformadmin.authz.v1.AuthzService" }}
{{- $_ := set $services "orgs-teams" "platformadmin.orgsteams.v1.OrgsTeamsService" }}
{{- $_ := set $services "contracts-licensing" "platformadmin.contractslicensing.v1.ContractsLicensingService" }}
{{- $_ := set $services "billing-dashboard" "platformadmin.billingdashboard.v1.BillingDashboardService" }}
{{- $_ := set $services "metricsproxy" "platformadmin.metricsproxy.v1.MetricsproxyService" }}
{{- $_ := set $services "marketplace-listener" "platformadmin.marketplacelistener.v1.MarketplaceListenerService" }}
{{- $_ := set $services "clusters" "platformadmin.clusters.v1.ClustersService" }}
{{- required (printf "no gRPC service is known for app %s" .) (get $services .) -}}
{{- end }}

{{/*
HTTP port of the marketplace-listener (used for its URL even when the app
block leaves httpPort out).
*/}}
{{- define "platform.marketplaceHttpPort" -}}
{{- $cfg := index .Values.apps "marketplace-listener" | default (dict) }}
{{- $cfg.httpPort | default 8081 | int }}
{{- end }}

{{/*
Addresses of the backends, as "KEY: value" lines (ConfigMap data). Every app
gets them: the gateway calls all backends and the backends call each other
(everything calls authz).
  <APP>_GRPC_ADDR               = <fullname>-<app>:50051
  MARKETPLACE_LISTENER_HTTP_URL = http://<fullname>-marketplace-listener:8081
*/}}
{{- define "platform.serviceAddresses" -}}
{{- $root := . -}}
MARKETPLACE_LISTENER_HTTP_URL: {{ printf "http://%s:%s" (include "platform.appFullname" (dict "root" $root "app" "marketplace-listener")) (include "platform.marketplaceHttpPort" $root) | quote }}
{{- range $app := list "authz" "orgs-teams" "contracts-licensing" "billing-dashboard" "metricsproxy" "marketplace-listener" "clusters" }}
{{ printf "%s_GRPC_ADDR" ($app | upper | replace "-" "_") }}: {{ printf "%s:%s" (include "platform.appFullname" (dict "root" $root "app" $app)) (include "platform.grpcPort" $root) | quote }}
{{- end }}
{{- end }}

{{/*
Name of the env var carrying an app's HTTP port.
*/}}
{{- define "platform.httpPortEnv" -}}
{{- if eq . "marketplace-listener" }}MARKETPLACE_HTTP_PORT{{ else }}HTTP_PORT{{ end }}
{{- end }}

{{/*
What each app uses, as YAML (read with fromYaml): its own database schema, the message bus, OpenFGA, the
object storage, and the apps it calls over gRPC (`calls`; the gateway also proxies HTTP to the listener).
`public` lists the gRPC services of an app that other teams' services may call (methods the apps declare
public, answered to a service account's token): the gRPC front door routes them, and grpc.clientNamespaces
may reach these apps' gRPC port.
The NetworkPolicies, the per-app secret env and the migration Job follow it.
*/}}
{{- define "platform.appTraits" -}}
gateway:
  # failed sign-in attempts per client address, counted in its schema so that every replica sees them
  database: true
  # the notices that evict its replicas' token caches
  bus: true
  calls: [authz, orgs-teams, contracts-licensing, billing-dashboard, metricsproxy, marketplace-listener, clusters]
  signsObjects: true
  # contract documents: S3 presigned download URLs (signed with the bucket's credentials, docs/contracts.md)
  objectStorage: true
authz:
  database: true
  # the notices its writes send, which empty what its readers keep of its answers (docs/authorization.md)
  bus: true
  openfga: true
  # checks, batch checks, permission checks, relations; allowed permissions
  public: [platformadmin.authz.v1.AuthzService, platformadmin.authz.v1.RolesService]
orgs-teams:
  database: true
  # the notices that evict its replicas' organization caches and tell the gateways of token changes
  bus: true
  objectStorage: true
  signsObjects: true
  siteAdmin: true
  # the clusters service: owners' cluster connections, set with their owner-team membership (team auto-connect)
  calls: [authz, clusters]
  # organization and team reads
  public: [platformadmin.orgsteams.v1.OrganizationsService]
contracts-licensing:
  database: true
  bus: true
  # contract documents
  objectStorage: true
  # the cluster inventory (bound clusters' status, importable clusters), usage (quotas at license issue) and the
  # license holders' accounts found or made at registration (orgs-teams)
  calls: [clusters, billing-dashboard, orgs-teams]
  # the platform license CA: its key sealed with SECRETS_ENCRYPTION_KEY, or imported from LICENSE_CA_*
  licenseCA: true
  # quota and expiry notices: SMTP_URL (credentials) and the notification settings
  notifications: true
  # license verification, the CA certificate and the revocation list
  public: [platformadmin.contractslicensing.v1.LicensingService]
billing-dashboard:
  database: true
  bus: true
  # agent-report ingestion: bus accounts (orgs-teams), cluster ownership (clusters), and the issued licenses and
  # contracts a report is attributed from (contracts-licensing)
  calls: [orgs-teams, clusters, contracts-licensing]
metricsproxy:
  database: true
  # the notices that evict what the gateways keep of its registrations (the auth hook's backends)
  bus: true
  # the dashboard APIs it registers datasources with (FLAVORA_*/FLAVORB_*, docs/metrics-proxy.md)
  metricsDashboards: true
marketplace-listener:
  database: true
  # the notices that evict what the gateways keep of its answers (the dashboard's marketplace rows, installers)
  bus: true
  marketplace: true
  # HTTPS to the metering providers and MARKETPLACE_CENTRAL_URL (on *Marketplace deployment types only)
  marketplaceApis: true
  # installer download links, signed alike by every replica (docs/marketplaces.md)
  signsObjects: true
  # subscribers' standalone organizations and claims (orgs-teams) and their contracts (contracts-licensing)
  calls: [orgs-teams, contracts-licensing]
clusters:
  database: true
  bus: true
  # owner tuples (authz); bus accounts for inventory ingestion and hub enrollment, and the organizations and admin
  # users of client organizations (orgs-teams)
  calls: [authz, orgs-teams]
{{- end }}

{{/*
The traits of one app (a dict). Context: dict "root" $ "app" "<app>"
*/}}
{{- define "platform.traitsOf" -}}
{{- index (include "platform.appTraits" .root | fromYaml) .app | default (dict) | toYaml }}
{{- end }}

{{/*
Whether other teams' services can reach the public apps ("true" or ""): grpc.clientNamespaces lists
namespaces, or a gRPC front door (Ingress or GRPCRoute) is enabled. Root context.
*/}}
{{- define "platform.grpcExposed" -}}
{{- if or .Values.grpc.clientNamespaces .Values.grpc.ingress.enabled .Values.grpc.grpcRoute.enabled }}true{{ end }}
{{- end }}

{{/*
The public gRPC services of the enabled apps, as YAML (read with fromYaml): app: [service, ...], for the gRPC
front door. Root context.
*/}}
{{- define "platform.publicServices" -}}
{{- $out := dict }}
{{- range $app, $cfg := .Values.apps }}
{{- $public := (include "platform.traitsOf" (dict "root" $ "app" $app) | fromYaml).public }}
{{- if and $cfg.enabled $public }}
{{- $_ := set $out $app $public }}
{{- end }}
{{- end }}
{{- if not $out }}
{{- fail "the gRPC front door (grpc.ingress, grpc.grpcRoute) needs one of authz, orgs-teams and contracts-licensing enabled" }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
The apps one app calls over gRPC, as a YAML list (read with fromYamlArray): its `calls`, and when other teams'
services can reach it (a public app, platform.grpcExposed), orgs-teams, which checks a service account's token
(orgs-teams asks its own Service, so it calls itself), and authz, which answers what the account holds (authz
answers that itself). Context: dict "root" $ "app" "<app>"
*/}}
{{- define "platform.callsOf" -}}
{{- $traits := include "platform.traitsOf" . | fromYaml }}
{{- $calls := $traits.calls | default list }}
{{- if and $traits.public (include "platform.grpcExposed" .root) }}
{{- $calls = append $calls "orgs-teams" }}
{{- if ne .app "authz" }}{{ $calls = append $calls "authz" }}{{ end }}
{{- end }}
{{- $calls | uniq | toYaml }}
{{- end }}

{{/*
Where PLATFORM_APP_KEYS comes from, first that applies:
  own     appKeys.existingSecret: a Secret of the operator's, key appKeys.existingSecretKey
  values  appKeys.keys: written into the chart's Secret <fullname>-app-keys
  shared  existingSecret: the operator's Secret of every other secret, key PLATFORM_APP_KEYS
  chart   the chart's Secret <fullname>-app-keys, its keys kept from the cluster (lookup) or one generated
Only the last generates anything: `helm template` (GitOps) renders the same manifests twice with any other.
Root context.
*/}}
{{- define "platform.appKeysSource" -}}
{{- if .Values.appKeys.existingSecret }}own
{{- else if .Values.appKeys.keys }}values
{{- else if .Values.existingSecret }}shared
{{- else }}chart
{{- end }}
{{- end }}

{{/*
Whether the chart renders its Secret <fullname>-app-keys ("true" or ""): unless a Secret of the operator's holds
the keys. Root context.
*/}}
{{- define "platform.appKeysInChartSecret" -}}
{{- if has (include "platform.appKeysSource" .) (list "values" "chart") }}true{{ end }}
{{- end }}

{{/*
The Secret holding PLATFORM_APP_KEYS: appKeys.existingSecret, existingSecret, or the chart's <fullname>-app-keys
(platform.appKeysSource). Root context.
*/}}
{{- define "platform.appKeysSecretName" -}}
{{- $source := include "platform.appKeysSource" . }}
{{- if eq $source "own" }}{{ .Values.appKeys.existingSecret }}
{{- else if eq $source "shared" }}{{ .Values.existingSecret }}
{{- else }}{{ printf "%s-app-keys" (include "platform.fullname" .) }}
{{- end }}
{{- end }}

{{/*
The key of PLATFORM_APP_KEYS in that Secret: appKeys.existingSecretKey in appKeys.existingSecret, else
PLATFORM_APP_KEYS (existingSecret holds every secret under its env name). Root context.
*/}}
{{- define "platform.appKeysSecretKey" -}}
{{- if eq (include "platform.appKeysSource" .) "own" }}{{ .Values.appKeys.existingSecretKey | default "PLATFORM_APP_KEYS" }}{{ else }}PLATFORM_APP_KEYS{{ end }}
{{- end }}

{{/*
The keys the chart's Secret <fullname>-app-keys holds, comma-separated: appKeys.keys; else the keys that Secret
holds in the cluster (lookup), so that an upgrade keeps them and keys put there by hand (a rotation) stay; else
one new key. Worked out once per render and kept in .Values (shared by every template of the render), so that
the Secret and every pod's checksum/app-keys see the same generated key: otherwise the first upgrade after an
install would find checksums that differ from the install's and roll every pod for nothing. Root context.
*/}}
{{- define "platform.appKeys" -}}
{{- if not (hasKey .Values "__platformAppKeys") }}
{{- $keys := "" }}
{{- if .Values.appKeys.keys }}
{{- $keys = join "," .Values.appKeys.keys }}
{{- else }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (printf "%s-app-keys" (include "platform.fullname" .)) | default (dict) }}
{{- $keys = index ($existing.data | default (dict)) "PLATFORM_APP_KEYS" | default "" | b64dec | default (randBytes 32) }}
{{- end }}
{{- $_ := set .Values "__platformAppKeys" $keys }}
{{- end }}
{{- index .Values "__platformAppKeys" }}
{{- end }}

{{/*
A digest of the app keys, for the pods' checksum/app-keys annotation: a change of keys rolls every app (a
rotation step is a rollout). From the chart's Secret, or the operator's (appKeys.existingSecret or
existingSecret) where the chart can look: helm install/upgrade; `helm template` cannot, so there it is the digest
of nothing, the same at every render, and the pods are restarted by hand after a change of keys.

An operator's existingSecret that the chart finds without PLATFORM_APP_KEYS is refused: every app would be stuck
on the missing key (a release that took its keys from the chart's Secret before existingSecret covered them,
upgraded without carrying them over). Root context.
*/}}
{{- define "platform.appKeysChecksum" -}}
{{- $source := include "platform.appKeysSource" . }}
{{- if has $source (list "own" "shared") }}
{{- $name := include "platform.appKeysSecretName" . }}
{{- $key := include "platform.appKeysSecretKey" . }}
{{- $own := lookup "v1" "Secret" .Release.Namespace $name | default (dict) }}
{{- $value := index ($own.data | default (dict)) $key | default "" }}
{{- if and (eq $source "shared") $own (not $value) }}
{{- $chartSecret := printf "%s-app-keys" (include "platform.fullname" .) }}
{{- fail (printf "the Secret %s (existingSecret) has no key PLATFORM_APP_KEYS, or an empty one, and every app reads it from there (the keys the apps sign their calls to each other with; the chart README, App keys). Add it: the release's current keys, if it has the Secret %s (kubectl -n %s get secret %s -o jsonpath='{.data.PLATFORM_APP_KEYS}' | base64 -d), else a new key (openssl rand -base64 32). Or name another Secret in appKeys.existingSecret, or give appKeys.keys." $name $chartSecret .Release.Namespace $chartSecret) }}
{{- end }}
{{- $value | sha256sum }}
{{- else }}
{{- include "platform.appKeys" . | sha256sum }}
{{- end }}
{{- end }}

{{/*
PLATFORM_APP_KEYS as an env entry. Context: dict "root" $ "optional" bool
*/}}
{{- define "platform.appKeysEnv" -}}
{{- include "platform.secretKeyEnv" (dict "name" "PLATFORM_APP_KEYS" "secret" (include "platform.appKeysSecretName" .root) "key" (include "platform.appKeysSecretKey" .root) "optional" .optional) }}
{{- end }}

{{/*
Whether orgs-teams verifies Kubernetes ServiceAccount tokens with TokenReview ("true" or ""): grpc.kubernetesTokens.enabled
and orgs-teams enabled. Root context.
*/}}
{{- define "platform.kubernetesTokens" -}}
{{- if and .Values.grpc.kubernetesTokens.enabled (index .Values.apps "orgs-teams" | default (dict)).enabled }}true{{ end }}
{{- end }}

{{/*
Name of an app's ServiceAccount. Context: dict "root" $ "app" "<app>"
apps.<app>.serviceAccount.name when set, else the chart's own (<fullname>-<app>) when
serviceAccount.create (the default), else "default".
*/}}
{{- define "platform.serviceAccountName" -}}
{{- $cfg := index .root.Values.apps .app | default (dict) }}
{{- $sa := $cfg.serviceAccount | default (dict) }}
{{- if $sa.name }}
{{- $sa.name }}
{{- else if (ne (toString $sa.create) "false") }}
{{- include "platform.appFullname" . }}
{{- else -}}
default
{{- end }}
{{- end }}

{{/*
A secretKeyRef env entry. Context: dict "name" "<ENV>" "secret" "<Secret>" "key" "<key>" "optional" bool
*/}}
{{- define "platform.secretKeyEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key | default .name }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end }}

{{/*
Where each secret env variable may come from besides existingSecret or the chart's Secret: the values
group whose own `existingSecret` wins for it, and whether that group names one key
(`existingSecretKey`) or several (`existingSecretKeys`, env name: key). PLATFORM_ADMIN_USERNAME and
PLATFORM_ADMIN_EMAIL are not secret: they have no group of their own.
*/}}
{{- define "platform.secretGroups" -}}
DATABASE_URL: {group: postgres, single: true}
OPENFGA_API_TOKEN: {group: openfga, single: true}
MARKETPLACE_API_SECRET: {group: marketplace}
PROVIDERA_ACCESS_KEY_ID: {group: marketplace}
PROVIDERA_SECRET_ACCESS_KEY: {group: marketplace}
PROVIDERC_SERVICE_ACCOUNT_KEY: {group: marketplace}
FLAVORA_TOKEN: {group: metricsDashboards}
FLAVORB_TOKEN: {group: metricsDashboards}
PLATFORM_ADMIN_PASSWORD: {group: platformAdmin, single: true}
SECRETS_ENCRYPTION_KEY: {group: secretsEncryption, single: true}
LICENSE_CA_CERT: {group: licenseCA}
LICENSE_CA_KEY: {group: licenseCA}
SMTP_URL: {group: notifications}
OBJECT_STORAGE_ACCESS_KEY_ID: {group: objectStorage}
OBJECT_STORAGE_SECRET_ACCESS_KEY: {group: objectStorage}
OBJECT_STORAGE_SIGNING_KEY: {group: objectStorage}
{{- end }}

{{/*
The Secret and key one secret env variable is read from, as YAML {secret, key, own}: its group's
existingSecret (own: true), else existingSecret or the chart's Secret under its own name.
Context: dict "root" $ "name" "<ENV>"
*/}}
{{- define "platform.secretSource" -}}
{{- $entry := index (include "platform.secretGroups" .root | fromYaml) .name | default (dict) }}
{{- $group := dict }}
{{- with $entry.group }}{{ $group = index $.root.Values . | default (dict) }}{{ end }}
{{- if and (kindIs "map" $group) $group.existingSecret }}
{{- $key := .name }}
{{- if $entry.single }}
{{- $key = $group.existingSecretKey | default .name }}
{{- else }}
{{- $key = index ($group.existingSecretKeys | default (dict)) .name | default .name }}
{{- end }}
{{- dict "secret" $group.existingSecret "key" $key "own" true | toYaml }}
{{- else }}
{{- dict "secret" (include "platform.secretName" .root) "key" .name "own" false | toYaml }}
{{- end }}
{{- end }}

{{/*
Whether the chart's Secret holds this variable ("true" or ""): not when its group has its own Secret.
Context: dict "root" $ "name" "<ENV>"
*/}}
{{- define "platform.inChartSecret" -}}
{{- if not (include "platform.secretSource" . | fromYaml).own }}true{{ end }}
{{- end }}

{{/*
One secret env entry, from where platform.secretSource says. Context: dict "root" $ "name" "<ENV>" "optional" bool
*/}}
{{- define "platform.secretEnvEntry" -}}
{{- $src := include "platform.secretSource" (dict "root" .root "name" .name) | fromYaml }}
{{- include "platform.secretKeyEnv" (dict "name" .name "secret" $src.secret "key" $src.key "optional" .optional) }}
{{- end }}

{{/*
DATABASE_URL as an env entry. Root context.
*/}}
{{- define "platform.databaseUrlEnv" -}}
{{- include "platform.secretEnvEntry" (dict "root" . "name" "DATABASE_URL") }}
{{- end }}

{{/*
The secret env one app gets (container `env` entries): only the secrets it reads.
Context: dict "root" $ "app" "<app>"
  DATABASE_URL                      apps with a schema
  OPENFGA_API_TOKEN                 authz, with OpenFGA
  MARKETPLACE_API_SECRET            marketplace-listener (with PLATFORM_ADMIN_USERNAME: who creates subscribers' organizations)
  FLAVORA_TOKEN, FLAVORB_TOKEN      metricsproxy (the dashboard APIs' tokens; optional)
  PLATFORM_ADMIN_*                  orgs-teams (the site-admin bootstrap)
  SECRETS_ENCRYPTION_KEY            orgs-teams (sealed manager sync tokens), contracts-licensing (sealed CA key)
  LICENSE_CA_CERT, LICENSE_CA_KEY   contracts-licensing (an imported license CA; optional)
  SMTP_URL                          contracts-licensing (notice mails, with the SMTP credentials; optional)
  OBJECT_STORAGE_SIGNING_KEY        gateway, orgs-teams and marketplace-listener (signed URLs; one key for all replicas)
  OBJECT_STORAGE_ACCESS_KEY_ID/...   orgs-teams, contracts-licensing and gateway (S3 credentials; optional)
Each comes from its group's own Secret when one is set (platform.secretSource), else from existingSecret or
the chart's Secret.
*/}}
{{- define "platform.secretEnv" -}}
{{- $root := .root }}
{{- $traits := include "platform.traitsOf" . | fromYaml }}
{{- $entries := list }}
{{- if $traits.database }}{{ $entries = append $entries (list "DATABASE_URL" false) }}{{ end }}
{{- if and $traits.openfga (include "platform.openfga" $root) }}{{ $entries = append $entries (list "OPENFGA_API_TOKEN" true) }}{{ end }}
{{- if $traits.marketplace }}
{{- $entries = append $entries (list "MARKETPLACE_API_SECRET" true) }}
{{- $entries = append $entries (list "PLATFORM_ADMIN_USERNAME" false) }}
{{- range $key := list "PROVIDERA_ACCESS_KEY_ID" "PROVIDERA_SECRET_ACCESS_KEY" "PROVIDERC_SERVICE_ACCOUNT_KEY" }}
{{- $entries = append $entries (list $key true) }}
{{- end }}
{{- end }}
{{- if $traits.metricsDashboards }}
{{- range $key := list "FLAVORA_TOKEN" "FLAVORB_TOKEN" }}{{ $entries = append $entries (list $key true) }}{{ end }}
{{- end }}
{{- if $traits.siteAdmin }}
{{- range $key := list "PLATFORM_ADMIN_USERNAME" "PLATFORM_ADMIN_PASSWORD" "PLATFORM_ADMIN_EMAIL" "SECRETS_ENCRYPTION_KEY" }}
{{- $entries = append $entries (list $key false) }}
{{- end }}
{{- end }}
{{- if $traits.licenseCA }}
{{- $entries = append $entries (list "SECRETS_ENCRYPTION_KEY" false) }}
{{- range $key := list "LICENSE_CA_CERT" "LICENSE_CA_KEY" }}{{ $entries = append $entries (list $key true) }}{{ end }}
{{- end }}
{{- if $traits.notifications }}{{ $entries = append $entries (list "SMTP_URL" true) }}{{ end }}
{{- if $traits.signsObjects }}{{ $entries = append $entries (list "OBJECT_STORAGE_SIGNING_KEY" false) }}{{ end }}
{{- if $traits.objectStorage }}
{{- range $key := list "OBJECT_STORAGE_ACCESS_KEY_ID" "OBJECT_STORAGE_SECRET_ACCESS_KEY" }}
{{- $entries = append $entries (list $key true) }}
{{- end }}
{{- end }}
{{- range $e := $entries }}
{{ include "platform.secretEnvEntry" (dict "root" $root "name" (index $e 0) "optional" (index $e 1)) }}
{{- end }}
{{- end }}

{{/*
Whether authz uses OpenFGA ("true" or ""): openfga.apiUrl is set. Root context.
*/}}
{{- define "platform.openfga" -}}
{{- if .Values.openfga.apiUrl }}true{{ end }}
{{- end }}

{{/*
Whether the OpenFGA setup Job finds the store by name and records its id in the ConfigMap
<fullname>-openfga ("true" or ""): OpenFGA without a storeId. Root context.
*/}}
{{- define "platform.openfgaDiscovered" -}}
{{- if and .Values.openfga.apiUrl (not .Values.openfga.storeId) }}
{{- if not .Values.openfga.setup.enabled }}
{{- fail "openfga.storeId is required when openfga.setup.enabled is false: the setup Job is what finds or creates the store (or empty openfga.apiUrl: the embedded engine)" }}
{{- end -}}
true
{{- end }}
{{- end }}

{{/*
The ConfigMap the OpenFGA setup Job writes OPENFGA_STORE_ID to. Root context.
*/}}
{{- define "platform.openfgaConfigMapName" -}}
{{- printf "%s-openfga" (include "platform.fullname" .) }}
{{- end }}

{{/*
The name of the OpenFGA store the setup Job finds or creates. Root context.
*/}}
{{- define "platform.openfgaStoreName" -}}
{{- .Values.openfga.storeName | default (printf "%s/%s" .Release.Namespace (include "platform.fullname" .)) | trunc 64 }}
{{- end }}

{{/*
A pod's topologySpreadConstraints (the app's list, else the global one); a constraint without a
labelSelector gets the app's selector labels. Context: dict "root" $ "app" "<app>" "cfg" <app values>
*/}}
{{- define "platform.topologySpread" -}}
{{- $list := .cfg.topologySpreadConstraints | default .root.Values.topologySpreadConstraints | default list }}
{{- $out := list }}
{{- range $c := $list }}
{{- $c = deepCopy $c }}
{{- if not $c.labelSelector }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" (include "platform.selectorLabels" (dict "root" $.root "app" $.app) | fromYaml)) }}
{{- end }}
{{- $out = append $out $c }}
{{- end }}
{{- if $out }}{{ toYaml $out }}{{ end }}
{{- end }}

{{/*
The pod-level settings every pod of the chart shares (the apps and the migration Job). Root context.
*/}}
{{- define "platform.podCommon" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/*
The /tmp emptyDir volume (the only writable path). Root context.
*/}}
{{- define "platform.tmpVolume" -}}
- name: tmp
  {{- with .Values.tmpSizeLimit }}
  emptyDir:
    sizeLimit: {{ . }}
  {{- else }}
  emptyDir: {}
  {{- end }}
{{- end }}

{{/*
The platform's public URL: publicUrl, else the ingress host's (https:// with ingress TLS); empty when neither says.
*/}}
{{- define "platform.publicUrl" -}}
{{- if .Values.publicUrl -}}
{{- .Values.publicUrl -}}
{{- else if and .Values.ingress.enabled .Values.ingress.host -}}
{{- printf "%s://%s/" (ternary "https" "http" .Values.ingress.tls.enabled) .Values.ingress.host -}}
{{- end -}}
{{- end }}
