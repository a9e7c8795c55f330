import type { clustersV1 } from '@platform/proto';

/** A CreateHubRequest of an organization's hub, every other field empty unless given (the tests' one way to make one). */
export function hubRequest(ownerId: number, name: string, extra: Partial<clustersV1.CreateHubRequest> = {}): clustersV1.CreateHubRequest {
  return {
    ownerType: 'organization',
    ownerId,
    name,
    uid: '',
    displayName: '',
    provider: '',
    kubernetesVersion: '',
    nodeCount: 0,
    statusJson: '',
    managerEndpoint: '',
    ...extra,
  };
}
