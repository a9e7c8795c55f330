import { z } from 'zod';
import { InputError } from '@platform/errors';
import type { featureSetsV1 } from '@platform/proto';
import type { Kept } from '../../backends';
import * as p from '../../params';
import { sectionRoutes, type Route } from '../../route';
import { HUB_MANAGE, HUB_PREFIX, HUB_READ, HubPath, hubInPath, type HubRef } from './hub';

const route = sectionRoutes({ tag: 'Cluster sets', backend: 'clusters' });

// Feature sets, sync status and auto-update of a cluster set (docs/cluster-sets.md). Changes are
// kept as the set's desired state and sent to the hub's agent; sync status compares it with what the agent reports.

const SetPath = HubPath.extend({ clusterset: p.segment });
const SET = `${HUB_PREFIX}/clustersets/:clusterset`;

const FeatureInfo = z
  .object({
    name: z.string(),
    title: z.string(),
    description: z.string(),
    recommended: z.boolean(),
    installed: z.boolean(),
    featureBlock: z.string(),
    requires: z.array(z.string()).meta({ description: 'Features (of any feature set) installed with this one' }),
  })
  .meta({ id: 'FeatureInfo' });

const FeatureSetInfo = z
  .object({
    name: z.string(),
    title: z.string(),
    description: z.string(),
    recommended: z.boolean(),
    installed: z.boolean().meta({ description: 'Whether any of its features is installed on the set' }),
    requiredFeatures: z.array(z.string()),
    features: z.array(FeatureInfo),
  })
  .meta({ id: 'FeatureSetInfo' });

const featureSetInfo = (f: featureSetsV1.FeatureSetInfo): z.input<typeof FeatureSetInfo> => ({
  name: f.name,
  title: f.title,
  description: f.description,
  recommended: f.recommended,
  installed: f.installed,
  requiredFeatures: f.requiredFeatures,
  features: f.features.map((x) => ({
    name: x.name,
    title: x.title,
    description: x.description,
    recommended: x.recommended,
    installed: x.installed,
    featureBlock: x.featureBlock,
    requires: x.requires,
  })),
});

/** The free-form body of install-featureset and update-featureset: any object (422 otherwise); the keys read are documented. */
const FreeForm = z.record(z.string(), z.unknown()).meta({
  id: 'FeatureSetValues',
  description:
    'Free-form object. `featureSet` (string) names the feature set; `features` (string[], install only) the features to install ' +
    '(default: the recommended ones); `values` (object) the Helm values. Other keys are ignored.',
});

/** The feature set, features and values a free-form body names; 400 when they are missing or of the wrong type. */
function readFreeForm(body: Record<string, unknown>, withFeatures: boolean) {
  const { featureSet, features, values } = body;
  if (typeof featureSet !== 'string' || !featureSet) {
    throw new InputError('featureSet must name a feature set', [{ field: 'featureSet', description: 'required string' }]);
  }
  if (withFeatures && features !== undefined && !(Array.isArray(features) && features.every((f) => typeof f === 'string'))) {
    throw new InputError('features must be an array of feature names', [{ field: 'features', description: 'string array' }]);
  }
  if (values !== undefined && (typeof values !== 'object' || values === null || Array.isArray(values))) {
    throw new InputError('values must be an object', [{ field: 'values', description: 'object' }]);
  }
  return { featureSet, features: (features as string[] | undefined) ?? [], valuesJson: JSON.stringify(values ?? {}) };
}

const EnableFeatureOptions = z
  .object({
    clusterSet: z.string().min(1),
    featureSet: z.string().min(1),
    features: z.array(z.string().min(1)).max(100).optional().meta({ description: 'Features to disable; absent: the whole feature set' }),
  })
  .meta({ id: 'EnableFeatureOptions' });

const FeatureSetChange = z
  .object({
    message: z.string(),
    installed: z.array(z.string()).optional().meta({ description: 'Every feature installed on the set after the change' }),
  })
  .meta({ id: 'FeatureSetChange' });

const SyncStatus = z.object({ insyncClusters: z.array(z.string()), unalignedClusters: z.array(z.string()) });
const AllFeaturesSync = z
  .record(z.string(), z.record(z.string(), SyncStatus))
  .meta({ id: 'AllFeaturesSyncStatus', description: 'Feature set → feature → the clusters running it at the set release, and the others' });
const FeaturesVersion = z
  .object({
    clusterSetVersion: z.string().meta({ description: 'The release the set pins' }),
    clusters: z.array(z.object({ name: z.string(), version: z.string().meta({ description: 'The agent release the cluster runs' }) })),
  })
  .meta({ id: 'OpscenterFeaturesVersion' });
const FeatureSync = z
  .object({ insyncClusters: z.array(z.string()), outOfSyncClusters: z.array(z.string()) })
  .meta({ id: 'FeatureSyncStatus' });
const AutoUpdateCheck = z.object({ possible: z.boolean() }).meta({ id: 'AutoUpdateCheck' });
const AutoUpdated = z.object({ message: z.string(), clusterSetVersion: z.string() }).meta({ id: 'AutoUpdateTriggered' });

/** The sync status the clusters service computes, as JSON it answers. */
const syncStatus = async (ctx: { kept: Kept; target: HubRef }, set: string, what: string, feature = '') =>
  JSON.parse((await ctx.kept.clusters.featureSets.syncStatus({ hubUid: ctx.target.uid, clusterSet: set, what, feature })).json);

export const featureSetRoutes: Route[] = [
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${SET}/featuresets`,
    summary: 'The feature catalog with what is installed on the cluster set',
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_READ,
    errors: [{ status: 404, description: 'for an unknown set' }],
    response: { status: 200, schema: z.array(FeatureSetInfo) },
    async handle({ params }, { kept, target }) {
      const { featureSets } = await kept.clusters.featureSets.listFeatureSets({ hubUid: target.uid, name: params.clusterset });
      return { body: featureSets.map(featureSetInfo) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: `${SET}/install-featureset`,
    summary: "Install a feature set's features (and those they require) on the cluster set; sent to the hub's agent",
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_MANAGE,
    body: { schema: FreeForm },
    errors: [
      { status: 404, description: 'for an unknown set' },
      { status: 400, description: 'for a missing or unknown feature set or feature, or values not an object' },
    ],
    response: { status: 200, schema: FeatureSetChange },
    async handle({ params, body }, { backends, target }) {
      const { featureSet, features, valuesJson } = readFreeForm(body, true);
      const { json } = await backends.clusters.featureSets.install({
        hubUid: target.uid,
        clusterSet: params.clusterset,
        featureSet,
        features,
        valuesJson,
      });
      return { body: JSON.parse(json) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: `${SET}/disable-featureset`,
    summary: 'Disable a feature set, or some of its features, on the cluster set',
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_MANAGE,
    body: { schema: EnableFeatureOptions },
    errors: [
      { status: 404, description: 'for an unknown set' },
      {
        status: 400,
        description:
          'when clusterSet is not the set of the path, the feature set is unknown or not installed, or another installed feature requires one being disabled',
      },
    ],
    response: { status: 200, schema: FeatureSetChange },
    async handle({ params, body }, { backends, target }) {
      if (body.clusterSet !== params.clusterset) {
        throw new InputError(`clusterSet "${body.clusterSet}" is not the cluster set of the path (${params.clusterset})`, [
          { field: 'clusterSet', description: 'must be the set of the path' },
        ]);
      }
      const { json } = await backends.clusters.featureSets.disable({
        hubUid: target.uid,
        clusterSet: params.clusterset,
        featureSet: body.featureSet,
        features: body.features ?? [],
      });
      return { body: JSON.parse(json) };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: `${SET}/:managedCluster/update-featureset`,
    summary: "Set one member cluster's own values for an installed feature set",
    auth: 'token',
    params: SetPath.extend({ managedCluster: p.segment }),
    target: hubInPath,
    requires: HUB_MANAGE,
    body: { schema: FreeForm },
    errors: [
      { status: 404, description: 'for an unknown set or a cluster not in it' },
      { status: 400, description: 'for a missing, unknown or not installed feature set' },
    ],
    response: { status: 200, schema: FeatureSetChange },
    async handle({ params, body }, { backends, target }) {
      const { featureSet, valuesJson } = readFreeForm(body, false);
      const { json } = await backends.clusters.featureSets.updateCluster({
        hubUid: target.uid,
        clusterSet: params.clusterset,
        cluster: params.managedCluster,
        featureSet,
        valuesJson,
      });
      return { body: JSON.parse(json) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${SET}/sync-status/all-features`,
    summary: 'Each installed feature: the clusters running it at the set release, and the unaligned ones',
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_READ,
    errors: [{ status: 404, description: 'for an unknown set' }],
    response: { status: 200, schema: AllFeaturesSync },
    handle: async ({ params }, ctx) => ({ body: await syncStatus(ctx, params.clusterset, 'all-features') }),
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${SET}/sync-status/opscenter-features-version`,
    summary: 'The release the set pins and the agent release each of its clusters runs',
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_READ,
    errors: [{ status: 404, description: 'for an unknown set' }],
    response: { status: 200, schema: FeaturesVersion },
    handle: async ({ params }, ctx) => ({ body: await syncStatus(ctx, params.clusterset, 'versions') }),
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${SET}/sync-status/:feature`,
    summary: "One feature's in-sync and out-of-sync clusters",
    auth: 'token',
    params: SetPath.extend({ feature: p.segment }),
    target: hubInPath,
    requires: HUB_READ,
    errors: [{ status: 404, description: 'for an unknown set or a feature not in the catalog' }],
    response: { status: 200, schema: FeatureSync },
    handle: async ({ params }, ctx) => ({ body: await syncStatus(ctx, params.clusterset, 'feature', params.feature) }),
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: `${SET}/auto-update/check`,
    summary: 'Whether auto-update is possible: every cluster of the set runs the latest release',
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_READ,
    errors: [{ status: 404, description: 'for an unknown set' }],
    response: { status: 200, schema: AutoUpdateCheck },
    async handle({ params }, { kept, target }) {
      const { possible } = await kept.clusters.featureSets.autoUpdateCheck({ hubUid: target.uid, name: params.clusterset });
      return { body: { possible } };
    },
  }),
  route({
    method: 'post',
    scope: 'write:organization',
    path: `${SET}/auto-update`,
    summary: "Move the set to the latest release and send it to the hub's agent",
    auth: 'token',
    params: SetPath,
    target: hubInPath,
    requires: HUB_MANAGE,
    errors: [
      { status: 404, description: 'for an unknown set' },
      { status: 400, description: '{message} when auto-update is not possible' },
    ],
    response: { status: 200, schema: AutoUpdated },
    async handle({ params }, { backends, target }) {
      const { json } = await backends.clusters.featureSets.autoUpdate({ hubUid: target.uid, name: params.clusterset });
      return { body: JSON.parse(json) };
    },
  }),
];
