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
{{- $_ := set $services "gateway" "platform.gateway.v1.GatewayService" }}
{{- $_ := set $services "authz" "platform.authz.v1.AuthzService" }}
{{- $_ := set $services "orgs-teams" "platform.orgsteams.v1.OrgsTeamsService" }}
{{- $_ := set $services "contracts-licensing" "platform.contractslicensing.v1.ContractsLicensingService" }}
{{- $_ := set $services "billing-dashboard" "platform.billingdashboard.v1.BillingDashboardService" }}
{{- $_ := set $services "metricsproxy" "platform.metricsproxy.v1.MetricsproxyService" }}
{{- $_ := set $services "marketplace-listener" "platform.marketplacelistener.v1.MarketplaceListenerService" }}
{{- $_ := set $services "clusters" "platform.clusters.v1.ClustersService" }}
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
Secret env of every app (container `env` entries). Root context.
DATABASE_URL and OPENFGA_API_TOKEN may each come from their own Secret
(postgres.existingSecret / openfga.existingSecret); the rest come from
existingSecret or the chart's Secret.
*/}}
{{- define "platform.secretEnv" -}}
{{- $secret := include "platform.secretName" . -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- if .Values.postgres.existingSecret }}
      name: {{ .Values.postgres.existingSecret }}
      key: {{ .Values.postgres.existingSecretKey | default "DATABASE_URL" }}
      {{- else }}
      name: {{ $secret }}
      key: DATABASE_URL
      {{- end }}
- name: OPENFGA_API_TOKEN
  valueFrom:
    secretKeyRef:
      {{- if .Values.openfga.existingSecret }}
      name: {{ .Values.openfga.existingSecret }}
      key: {{ .Values.openfga.existingSecretKey | default "OPENFGA_API_TOKEN" }}
      {{- else }}
      name: {{ $secret }}
      key: OPENFGA_API_TOKEN
      {{- end }}
      optional: true
- name: MARKETPLACE_API_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: MARKETPLACE_API_SECRET
      optional: true
{{- range $key := list "PLATFORM_ADMIN_USERNAME" "PLATFORM_ADMIN_PASSWORD" "PLATFORM_ADMIN_EMAIL" }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $key }}
{{- end }}
{{- end }}
