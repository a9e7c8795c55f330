import { featureSetsV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { FeatureSets } from './feature-sets';

const json = (value: unknown) => ({ json: JSON.stringify(value) });

/** The FeatureSetsService methods that change nothing; every other one is a write, announced (clusters-changed.ts). */
export const FEATURE_SETS_READS: readonly (keyof typeof featureSetsV1.FeatureSetsServiceService)[] = [
  'listFeatureSets',
  'syncStatus',
  'autoUpdateCheck',
];

/** The FeatureSetsService binding: one line per RPC of proto/platformadmin/clusters/v1/feature_sets.proto. */
export function featureSetsService(features: FeatureSets): ServiceBinding<typeof featureSetsV1.FeatureSetsServiceService> {
  return bindService(featureSetsV1.FeatureSetsServiceService, {
    listFeatureSets: async (req) => ({ featureSets: await features.list(req.hubUid, req.name) }),
    install: async (req) => json(await features.install(req)),
    disable: async (req) => json(await features.disable(req)),
    updateCluster: async (req) => json(await features.updateCluster(req)),
    syncStatus: async (req) => json(await features.syncStatus(req)),
    autoUpdateCheck: (req) => features.autoUpdateCheck(req.hubUid, req.name),
    autoUpdate: async (req) => json(await features.autoUpdate(req.hubUid, req.name)),
  });
}
